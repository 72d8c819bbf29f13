// The local backend's write-ahead intents (src/state/local/intent-journal.ts): {state file}.intents,
// mode 0600, removed once nothing is pending; a last line cut short by a crash is ignored (and the
// next record does not run into it); any other unreadable line is an error naming file:line; a
// directory, FIFO or link to a device at its path is refused, as the state file's is. What every
// backend does is in the conformance suite (./conformance.ts).
import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, symlinkSync } from "node:fs";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalStateStore, localStateStore, newState } from "../../src/state/index.js";
import { intentIds as ids, writeIntent as intent, mode, tempDir, userError } from "./helpers.js";

/** Opens and closes a FIFO for writing, so that a reader blocked on it gets EOF. */
function unblock(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader: nothing is blocked on it
  }
}

/** Fails (instead of hanging the test) when `p` has not settled within `ms`. */
function within<T>(p: Promise<T>, ms = 3_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`still blocked after ${ms} ms`)), ms)),
  );
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe("the local intent journal", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  let journal: string;
  let store: LocalStateStore;
  const fifos: string[] = [];
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = join(dir, "state", "dev.json");
    journal = `${file}.intents`;
    store = localStateStore(file, { stack: "dev" });
  });
  afterEach(async () => {
    for (const f of fifos.splice(0)) unblock(f);
    await cleanup();
  });

  it("is {state file}.intents, mode 0600, in a directory made 0700 when there was none", async () => {
    expect(await store.pendingIntents()).toEqual([]);
    expect(existsSync(journal)).toBe(false);
    await store.recordIntents([intent("a"), intent("b")]);
    expect(await mode(journal)).toBe(0o600);
    expect(await mode(join(dir, "state"))).toBe(0o700);
    const lines = (await readFile(journal, "utf8")).split("\n");
    expect(lines.at(-1)).toBe(""); // every record ends with its newline
    expect(lines.slice(0, -1).map((l) => JSON.parse(l) as unknown)).toEqual([
      { begin: intent("a") },
      { begin: intent("b") },
    ]);
    // Beside the state, not in it: the state file is neither made nor changed.
    expect(existsSync(file)).toBe(false);
    expect(ids(await localStateStore(file, { stack: "dev" }).pendingIntents())).toEqual(["a", "b"]);
  });

  it("is removed once every intent is cleared, and made again by the next record", async () => {
    await store.write(newState("dev"), undefined);
    await store.recordIntents([intent("a"), intent("b"), intent("c")]);
    await store.clearIntents(["b"]);
    expect(existsSync(journal)).toBe(true);
    expect(ids(await store.pendingIntents())).toEqual(["a", "c"]);
    await store.clearIntents(["a", "c"]);
    expect(existsSync(journal)).toBe(false);
    expect(await store.pendingIntents()).toEqual([]);
    await store.recordIntents([intent("d")]);
    expect(await mode(journal)).toBe(0o600);
    expect(ids(await store.pendingIntents())).toEqual(["d"]);
    await store.clearIntents(["d"]);
    expect(existsSync(journal)).toBe(false);
  });

  it("of a symlinked state file sits beside the file the link leads to", async () => {
    const real = join(dir, "elsewhere", "real.json");
    mkdirSync(join(dir, "elsewhere"));
    mkdirSync(join(dir, "state"));
    await writeFile(real, "");
    symlinkSync(real, file);
    await store.recordIntents([intent("a")]);
    expect(existsSync(`${real}.intents`)).toBe(true);
    expect(existsSync(journal)).toBe(false);
  });

  it("a torn last line (a crash during its append) is ignored, and the next record does not run into it", async () => {
    await store.write(newState("dev"), undefined);
    await store.recordIntents([intent("a"), intent("b")]);
    const torn = JSON.stringify({ begin: intent("torn") }).slice(0, 40);
    await appendFile(journal, torn);
    expect(ids(await store.pendingIntents())).toEqual(["a", "b"]);
    expect(ids(await localStateStore(file, { stack: "dev" }).pendingIntents())).toEqual(["a", "b"]);
    // The next run records again: its intents are readable, and so is everything after them.
    const next = localStateStore(file, { stack: "dev" });
    await next.recordIntents([intent("c")]);
    await next.clearIntents(["a"]);
    expect(ids(await next.pendingIntents())).toEqual(["b", "c"]);
    expect(await readFile(journal, "utf8")).not.toContain(torn);
  });

  it("a last record whole but for its newline counts, and the next record starts on a line of its own", async () => {
    await store.write(newState("dev"), undefined);
    await store.recordIntents([intent("a")]);
    await appendFile(journal, JSON.stringify({ begin: intent("whole") }));
    expect(ids(await store.pendingIntents())).toEqual(["a", "whole"]);
    const next = localStateStore(file, { stack: "dev" });
    await next.recordIntents([intent("c")]);
    expect(ids(await next.pendingIntents())).toEqual(["a", "whole", "c"]);
  });

  it(
    "an unreadable line that is not the last is an error naming " + "file:line; nothing is recorded or cleared",
    async () => {
      await store.write(newState("dev"), undefined);
      await store.recordIntents([intent("a")]);
      await appendFile(journal, "{not json\n");
      await appendFile(journal, `${JSON.stringify({ begin: intent("b") })}\n`);
      const before = await readFile(journal, "utf8");
      const reader = localStateStore(file, { stack: "dev" });
      const e = await userError(() => reader.pendingIntents());
      const d = e.diagnostics[0]!;
      expect(d.summary).toContain(`${journal}:2`);
      expect(d).toMatchObject({ file: journal, line: 2 });
      expect(d.detail).toMatch(/move it away/);
      // A record or a clear reads the pending intents first: refused the same way, the file as it was.
      await userError(() => localStateStore(file, { stack: "dev" }).recordIntents([intent("c")]));
      await userError(() => localStateStore(file, { stack: "dev" }).clearIntents(["a"]));
      expect(await readFile(journal, "utf8")).toBe(before);
      // A line that is JSON but not a record is unreadable too.
      await writeFile(
        journal,
        `${JSON.stringify({ begin: { id: "no-changes" } })}\n${JSON.stringify({ begin: intent("b") })}\n`,
      );
      expect(
        (await userError(() => localStateStore(file, { stack: "dev" }).pendingIntents())).diagnostics[0]!.summary,
      ).toContain(`${journal}:1`);
    },
  );

  const refused = [
    "a directory",
    "a FIFO",
    "a symlink to a directory",
    "a symlink to a FIFO",
    "a symlink to /dev/null",
  ] as const;
  for (const kind of refused) {
    it(`${kind} at its path is refused by pending, record and clear, and left as it is`, async () => {
      mkdirSync(join(dir, "state"));
      const other = join(dir, "other");
      if (kind === "a directory") mkdirSync(journal);
      else if (kind === "a FIFO") {
        execFileSync("mkfifo", [journal]);
        fifos.push(journal);
      } else if (kind === "a symlink to a directory") {
        mkdirSync(other);
        symlinkSync(other, journal);
      } else if (kind === "a symlink to a FIFO") {
        execFileSync("mkfifo", [other]);
        fifos.push(other);
        symlinkSync(other, journal);
      } else symlinkSync("/dev/null", journal);
      const before = lstatSync(journal);
      for (const op of [
        () => store.pendingIntents(),
        () => store.recordIntents([intent("a")]),
        () => store.clearIntents(["a"]),
      ]) {
        const e = await within(userError(op));
        const summary = e.diagnostics[0]!.summary;
        expect(summary).toContain(`intent journal ${journal}`);
        expect(summary).toMatch(
          kind.startsWith("a symlink")
            ? /links to .*, which is .*, not a regular file/
            : /is a (directory|FIFO).*, not a regular file/,
        );
        expect(e.diagnostics[0]!.detail).toMatch(/regular file beside the state/);
      }
      const after = lstatSync(journal);
      expect([after.ino, after.mode, after.isSymbolicLink()]).toEqual([
        before.ino,
        before.mode,
        before.isSymbolicLink(),
      ]);
    });
  }
});
