// The one way converge reads a file the user hands it: the stack (-f, YAML or the entry of a
// program), --var-file, provider.seed, a saved plan (apply/show PLANFILE), a state to push, the
// state given by --state and the embedded emulator's data file. Only a regular file (or a symlink
// to one) is read: a FIFO would block the open or the read for ever, /dev/zero never ends. And at
// most a cap of bytes: a larger file is refused from its size, before any of it is read, and a
// file that grows past the cap while it is read is refused at the cap.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
  type Stats,
} from "node:fs";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { kindOf } from "./regular-files.js";

const MiB = 1024 * 1024;
/** Stacks, var files, seeds and program entries: 23 MB of YAML holds 100,000 resources. */
export const MAX_SOURCE_BYTES = 64 * MiB;
/** States and saved plans, which converge writes and which grow with the stack (a state about
 *  1 KB a resource, a saved plan up to 2.7 KB a change: 266 MB for 100,000): as much as one string
 *  can hold (V8's limit is 2^29 − 24 characters, and a UTF-8 file has at most a character a byte),
 *  for JSON.parse reads a whole text. */
export const MAX_DATA_BYTES = 500 * MiB;

/** Opening a FIFO without a writer does not wait; a terminal is never made the controlling one. */
const NO_WAIT = (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const CHUNK = 64 * 1024;

/** A file refused before it was read: `message` is "<what> <path> <problem>". */
export class InputFileError extends Error {
  override readonly name = "InputFileError";
  constructor(
    readonly what: string,
    readonly path: string,
    readonly problem: string,
    readonly detail: string,
  ) {
    super(`${what} ${path} ${problem}`);
  }

  /** The refusal as the user's error, naming the file. */
  userError(extra: { code?: string; detail?: string } = {}): UserError {
    return new UserError(
      error(this.message, {
        file: this.path,
        detail: extra.detail ?? this.detail,
        ...(extra.code ? { code: extra.code } : {}),
      }),
    );
  }
}

/** A cap as it is named in messages: "500 MiB", or a count of bytes. */
export const capText = (bytes: number): string => (bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`);

function tooLarge(path: string, what: string, maxBytes: number): InputFileError {
  const cap = capText(maxBytes);
  return new InputFileError(
    what,
    path,
    `is larger than ${cap}, the most converge reads`,
    `Files over ${cap} are refused without being read: no stack, input or state needs that much.`,
  );
}

function notRegular(path: string, what: string, st: Stats): InputFileError {
  let target: string | undefined;
  try {
    target = lstatSync(path).isSymbolicLink() ? realpathSync(path) : undefined;
  } catch {
    target = undefined;
  }
  const is = target !== undefined ? `links to ${target}, which is ${kindOf(st)}` : `is ${kindOf(st)}`;
  return new InputFileError(
    what,
    path,
    `${is}, not a regular file`,
    "Only a regular file (or a symlink to one) is read here: a FIFO would be " +
      "waited on for ever, and a device read without end.",
  );
}

/** Refuses what `st` says is not a regular file of at most `maxBytes`. */
export function checkInputStats(st: Stats, path: string, what: string, maxBytes: number): void {
  if (!st.isFile()) throw notRegular(path, what, st);
  if (st.size > maxBytes) throw tooLarge(path, what, maxBytes);
}

/** Throws an InputFileError unless `path` is (or links to) a regular file of at most `maxBytes`.
 *  Errors of the file system (ENOENT, EACCES…) are thrown as they are, for the caller to word. */
export function checkInputFile(path: string, what: string, maxBytes: number): void {
  checkInputStats(statSync(path), path, what, maxBytes);
}

/** The bytes of the regular file at `path`, at most `maxBytes` of them; anything else is an
 *  InputFileError, checked before the open and again on the file opened. fs errors as they are. */
export function readInputFile(path: string, what: string, maxBytes: number): Buffer {
  checkInputFile(path, what, maxBytes);
  const fd = openSync(path, constants.O_RDONLY | NO_WAIT);
  try {
    const st = fstatSync(fd);
    checkInputStats(st, path, what, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(Math.max(st.size - total, CHUNK), maxBytes + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(n === buf.length ? buf : buf.subarray(0, n));
      total += n;
      if (total > maxBytes) throw tooLarge(path, what, maxBytes);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
