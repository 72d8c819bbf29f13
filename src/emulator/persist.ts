// Durable, atomic persistence of the world with group commit: at most one write in flight; every
// change made while it runs is picked up by the next one. A change is acknowledged only once a
// write that includes it has been renamed into place, and a crash at any moment leaves either the
// old or the new complete file (temp file + fsync + rename + directory fsync).
import type { EmulatorWorld } from "../generated/schemas.js";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { InputFileError, MAX_DATA_BYTES, readInputFile } from "../fs/input-file.js";
import { errnoCode } from "../fs/errors.js";
import { checkWorld, WorldError } from "./seed.js";

/** Loads a data file if it exists: undefined when absent, a clear Error when broken. */
export function loadDataFile(file: string): EmulatorWorld | undefined {
  let text: string;
  try {
    text = readInputFile(file, "emulator data file", MAX_DATA_BYTES).toString("utf8");
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined;
    if (e instanceof InputFileError) throw new WorldError(e.message, { file }, e.message);
    throw e;
  }
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
          await writeFileAtomic(this.file, text, { syncDir: "best-effort" });
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
