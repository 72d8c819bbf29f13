// Atomic file replacement, the one way converge writes a file it must never leave half-written
// (the state, a saved plan, the emulator's world): the text goes to a temp file in the same
// directory (created 0600 and chmod-ed 0600 whatever the umask: these files hold grants and
// tokens), is fsynced, then renamed over the target, and the directory is fsynced so that the
// rename is durable. A crash at any moment leaves the old or the new complete file, plus at worst
// a temp file that `removeTempLeftovers` cleans up later.
//
// The target is written as given: callers that follow symlinks (the state store writes a
// symlinked state file where it points) resolve the path first. Neutral: the emulator uses it too.
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { open, readdir, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fsyncDir, pidAlive } from "./errors.js";
import { textPieces } from "../base/text-pieces.js";

const MODE = 0o600;

/** The most bytes of the file's name a temp file's name takes: the rest fits in NAME_MAX (255). */
const TEMP_BASE_BYTES = 200;

/** `file`'s name, cut to TEMP_BASE_BYTES (whole characters) so that its temp files' names are not too long. */
function tempBase(file: string): string {
  let base = basename(file);
  while (Buffer.byteLength(base, "utf8") > TEMP_BASE_BYTES) base = Array.from(base).slice(0, -1).join("");
  return base;
}

/** A fresh temp file name next to `file`: `.{base}.{kind}-{pid}-{random hex}` (a long base cut). */
export function tempPathFor(file: string, kind = "tmp"): string {
  return join(dirname(file), `.${tempBase(file)}.${kind}-${process.pid}-${randomBytes(6).toString("hex")}`);
}

export interface AtomicWriteOptions {
  /** Runs after the temp file is durable and before it replaces the target (the state store
   *  keeps a backup of the current file there). */
  beforeRename?: () => Promise<void>;
  /** fsync the directory after the rename; failures are thrown unless `"best-effort"`. */
  syncDir?: true | "best-effort";
}

/** Pieces handed to one writev call (Linux's IOV_MAX). */
const PIECES_PER_CALL = 1024;

/** Writes `data` at the file's position: a text as UTF-8, or byte pieces one after another
 *  (written as they are, with writev: copying 100 MB of pieces into blocks cost more than writing). */
export async function writeAll(
  fh: Pick<FileHandle, "writeFile" | "writev">,
  data: string | readonly Uint8Array[],
): Promise<void> {
  if (typeof data === "string") return fh.writeFile(data, "utf8");
  for (let i = 0; i < data.length;) {
    const batch = data.slice(i, i + PIECES_PER_CALL);
    let { bytesWritten } = await fh.writev(batch);
    let whole = 0;
    while (whole < batch.length && bytesWritten >= batch[whole]!.byteLength) bytesWritten -= batch[whole++]!.byteLength;
    // A short write: the rest of the piece it stopped in (writeFile writes all of it, or throws).
    if (whole < batch.length) await fh.writeFile(batch[whole++]!.subarray(bytesWritten));
    i += whole;
  }
}

/** Replaces `file` with `data` (a text, or the bytes of its pieces in order) atomically (see the header). */
export async function writeFileAtomic(
  file: string,
  data: string | readonly Uint8Array[],
  opts: AtomicWriteOptions = {},
): Promise<void> {
  const tmp = tempPathFor(file);
  try {
    const fh = await open(tmp, "wx", MODE);
    try {
      await fh.chmod(MODE); // whatever the umask
      await writeAll(fh, data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await opts.beforeRename?.();
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  const synced = fsyncDir(dirname(file));
  await (opts.syncDir === "best-effort" ? synced.catch(() => undefined) : synced);
}

/** Characters handed to one write by writeFileAtomicSync when the text comes in pieces. */
const SYNC_PIECE = 1 << 20;

/** Writes the pieces one after another at the file's position, in writes of about SYNC_PIECE characters. */
function writePiecesSync(fd: number, pieces: Iterable<string>): void {
  for (const piece of textPieces(pieces, SYNC_PIECE)) writeFileSync(fd, piece, "utf8");
}

/** `writeFileAtomic` for synchronous callers (a saved plan, written once before exit). The text
 *  may come in pieces, written as they are made (a plan of 100,000 changes is 266 MB); if making
 *  them throws, nothing replaces the file and the temp file is removed. */
export function writeFileAtomicSync(file: string, text: string | Iterable<string>): void {
  const tmp = tempPathFor(file);
  try {
    const fd = openSync(tmp, "wx", MODE);
    try {
      if (typeof text === "string") writeFileSync(fd, text, "utf8");
      else writePiecesSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export interface LeftoverAges {
  /** A dead writer's temp file is removed once it is this old (default: at once). */
  minAgeMs?: number;
  /** Any temp file is removed once it is this old, whatever its pid says (pids are reused). */
  maxAgeMs?: number;
}

/** Removes temp files (`tempPathFor(file, kind)`, any kind) left next to `file` by writers that
 *  were killed; never those of this process. Best effort. */
export async function removeTempLeftovers(file: string, ages: LeftoverAges = {}): Promise<void> {
  const dir = dirname(file);
  const escaped = tempBase(file).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`^\\.${escaped}\\.(?:[a-z]+-)?tmp-(\\d+)-[0-9a-f]+$`);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = pattern.exec(name);
    const pid = Number(m?.[1]);
    if (!m || pid === process.pid) continue;
    const path = join(dir, name);
    try {
      const age = Date.now() - (await stat(path)).mtimeMs;
      if (age >= (ages.maxAgeMs ?? Number.POSITIVE_INFINITY) || (age >= (ages.minAgeMs ?? 0) && !pidAlive(pid)))
        await rm(path, { force: true });
    } catch {
      // gone already, or not ours to remove
    }
  }
}
