// The local backend's write-ahead intents: {state file}.intents beside the state, one JSON line a
// record, appended and fsynced before the cloud write it describes starts. A line is an intent
// ({"begin": …}) or the IDs it settles ({"end": […]}); the file is removed once nothing is
// pending. A line cut short by a crash while it was appended is the last one, and is ignored (its
// write never started: the append had not returned). Any other unreadable line is an error: the
// intents are converge's record of its own writes, and guessing would forge or lose one.
import { type FileHandle, open, readFile, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import type { WriteIntent } from "../../generated/schemas.js";
import { fsError, fsyncDir, readTextIfExists } from "../../fs/errors.js";
import { makeDirs, regularOrMissing, type FileRole } from "../../fs/regular-files.js";

const JOURNAL: FileRole = {
  what: "intent journal",
  detail:
    "converge records each cloud write there before it starts, as a regular file " +
    "beside the state. Move the other file away and run again.",
};

type Line = { begin: WriteIntent } | { end: string[] };

export class IntentJournal {
  /** One change of the file at a time (a clear that removes it must not race an append). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  record(intents: readonly WriteIntent[]): Promise<void> {
    if (!intents.length) return Promise.resolve();
    return this.serial(async () => {
      const open = await this.openIds();
      await this.append(intents.map((begin) => ({ begin })));
      for (const i of intents) open.add(i.id);
    });
  }

  clear(ids: readonly string[]): Promise<void> {
    if (!ids.length) return Promise.resolve();
    return this.serial(() => this.clearNow(ids));
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  /** The IDs pending in the file, once read (this process holds the state's lock: no one else
   *  changes the file meanwhile). Reading the whole file at every clear was quadratic. */
  private open: Set<string> | undefined;

  private async openIds(): Promise<Set<string>> {
    return (this.open ??= new Set((await this.pending()).map((i) => i.id)));
  }

  private async clearNow(ids: readonly string[]): Promise<void> {
    const open = await this.openIds();
    const gone = ids.filter((id) => open.has(id));
    if (!gone.length) return;
    for (const id of gone) open.delete(id);
    if (!open.size) {
      await this.closeFile();
      try {
        await rm(this.path, { force: true });
        await fsyncDir(dirname(this.path));
      } catch (e) {
        throw fsError(e, "remove the intent journal", this.path);
      }
      return;
    }
    await this.append([{ end: gone }]);
  }

  async pending(): Promise<WriteIntent[]> {
    await regularOrMissing(this.path, JOURNAL);
    const text = await readTextIfExists(this.path, "read the intent journal");
    if (text === undefined) return [];
    const lines = text.split("\n");
    const open = new Map<string, WriteIntent>();
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i]!;
      if (!raw.trim()) continue;
      const line = parseLine(raw);
      if (!line) {
        // Cut short by a crash during its append: only the last line can be.
        if (i === lines.length - 1) break;
        throw new UserError(
          error(`${this.path}:${i + 1}: unreadable intent record`, {
            file: this.path,
            line: i + 1,
            column: 1,
            detail:
              "The file records converge's own cloud writes and was changed by something else. Nothing was " +
              "read or written; restore it from a copy, or move it away to forget the pending writes it " +
              "records.",
          }),
        );
      }
      if ("begin" in line) open.set(line.begin.id, line.begin);
      else for (const id of line.end) open.delete(id);
    }
    return [...open.values()];
  }

  /** The file kept open between appends (an apply appends thousands of times); `prefix` ends a
   *  torn last line found when it was opened; `fresh`: created by this open, its directory entry
   *  not yet synced. */
  private handle: { fh: FileHandle; prefix: string; fresh: boolean } | undefined;

  private async opened(): Promise<{ fh: FileHandle; prefix: string; fresh: boolean }> {
    // Still the file at the path? (another handle may have removed it once nothing was pending)
    if (this.handle && !(await sameFile(this.handle.fh, this.path))) await this.closeFile();
    if (this.handle) return this.handle;
    const existed = (await regularOrMissing(this.path, JOURNAL)) !== undefined;
    // Intents may be recorded before the state is first written or locked: its directory too.
    if (!existed) await makeDirs(dirname(this.path));
    const fh = await open(this.path, "a+", 0o600);
    try {
      return (this.handle = { fh, prefix: await this.endTornLine(fh), fresh: !existed });
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }

  private async closeFile(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    await h?.fh.close().catch(() => undefined);
  }

  private async append(lines: readonly Line[]): Promise<void> {
    try {
      const h = await this.opened();
      await h.fh.appendFile(h.prefix + lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
      h.prefix = "";
      await h.fh.sync();
      // A new file is durable once its directory entry is.
      if (h.fresh) await fsyncDir(dirname(this.path));
      h.fresh = false;
    } catch (e) {
      await this.closeFile();
      throw fsError(e, "write the intent journal", this.path);
    }
  }

  /**
   * A last line without its newline was cut short by a crash during its append (pending() ignores
   * it unless it reads as a whole record): the next record must not run into it, which would make
   * both one unreadable line that is no longer the last. It is ended when it reads as a record,
   * else cut off. Returns what to write before the next record. Reads only the file's last byte
   * unless that is not a newline.
   */
  private async endTornLine(fh: FileHandle): Promise<string> {
    const { size } = await fh.stat();
    if (size === 0) return "";
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    if (last[0] === 0x0a) return "";
    const text = await readFile(this.path);
    const start = text.lastIndexOf(0x0a) + 1;
    if (parseLine(text.subarray(start).toString("utf8"))) return "\n";
    await fh.truncate(start);
    return "";
  }
}

async function sameFile(fh: FileHandle, path: string): Promise<boolean> {
  const [a, b] = await Promise.all([fh.stat(), stat(path).catch(() => undefined)]);
  return b !== undefined && a.ino === b.ino && a.dev === b.dev;
}

function parseLine(raw: string): Line | undefined {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  if (
    o.begin &&
    typeof o.begin === "object" &&
    typeof (o.begin as WriteIntent).id === "string" &&
    Array.isArray((o.begin as WriteIntent).changes)
  )
    return { begin: o.begin as WriteIntent };
  if (Array.isArray(o.end) && o.end.every((x) => typeof x === "string")) return { end: o.end as string[] };
  return undefined;
}
