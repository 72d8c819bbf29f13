// Durable, atomic persistence of the world with group commit: at most one write in flight; every
// change made while it runs is picked up by the next one. A change is acknowledged only once a
// write that includes it has been renamed into place, and a crash at any moment leaves either the
// old or the new complete file (temp file + fsync + rename + directory fsync).
import { existsSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { EmulatorWorld } from "../generated/schemas.js";
import { fsyncDir, pidAlive } from "../state/fsutil.js";
import { checkWorld, WorldError } from "./seed.js";

let tmpCounter = 0;

/** Writes `text` to `file` atomically with mode 0600 (the world holds bearer tokens). */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${++tmpCounter}.tmp`);
  let fh;
  try {
    fh = await open(tmp, "w", 0o600);
    await fh.writeFile(text, "utf8");
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, file);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  // Make the rename itself durable; best effort (the file itself is already in place).
  await fsyncDir(dirname(file)).catch(() => undefined);
}

/** Removes temp files left by a process that was killed mid-write (only those of dead PIDs). */
export function removeStaleTempFiles(file: string): void {
  const dir = dirname(file);
  const prefix = `.${basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.startsWith(prefix) || !n.endsWith(".tmp")) continue;
    const m = /^(\d+)\.(\d+)\.tmp$/.exec(n.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && pidAlive(pid)) continue;
    try {
      unlinkSync(join(dir, n));
    } catch {
      /* already gone */
    }
  }
}

/** Loads a data file if it exists: undefined when absent, a clear Error when broken. */
export function loadDataFile(file: string): EmulatorWorld | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, "utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const why = `not valid JSON (${(e as Error).message}); move it away to start from the seed`;
    throw new WorldError(`data file ${file}: ${why}`, { file }, `emulator data file: ${why}`);
  }
  return checkWorld(value, `data file ${file}`);
}

interface Waiter {
  generation: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class Persister {
  private generation = 0;
  private flushed = 0;
  private running: Promise<void> | undefined;
  private waiters: Waiter[] = [];

  constructor(
    private readonly file: string,
    private readonly serialize: () => string,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Records that the world changed; returns the generation a caller can wait for. */
  markDirty(): number {
    this.generation++;
    this.running ??= this.loop();
    return this.generation;
  }

  /** Resolves once a write including generation `g` is on disk; rejects if that write failed. */
  durable(g: number): Promise<void> {
    if (this.flushed >= g) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ generation: g, resolve, reject });
      this.running ??= this.loop();
    });
  }

  /** Writes everything changed so far. */
  async flush(): Promise<void> {
    if (this.flushed < this.generation) await this.durable(this.generation);
    else if (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    try {
      // Let the requests that arrived in the same tick join this write.
      await new Promise<void>((r) => setImmediate(r));
      while (this.flushed < this.generation) {
        const target = this.generation;
        const text = this.serialize();
        try {
          await writeFileAtomic(this.file, text);
        } catch (e) {
          this.log(`emulator: cannot write ${this.file}: ${(e as Error).message}`);
          // Fail everyone waiting; the next change retries the write.
          this.settle(Number.POSITIVE_INFINITY, e);
          return;
        }
        this.flushed = target;
        this.settle(target);
      }
    } finally {
      // Synchronous with the last check above, so no markDirty can slip between them.
      this.running = undefined;
    }
  }

  private settle(upTo: number, error?: unknown): void {
    const done: Waiter[] = [];
    const keep: Waiter[] = [];
    for (const w of this.waiters) (w.generation > upTo ? keep : done).push(w);
    this.waiters = keep;
    for (const w of done) {
      if (error === undefined) w.resolve();
      else w.reject(error);
    }
  }
}
