// The files converge keeps (state, backup, lock) are regular files in directories it creates 0700.
// Whatever else sits at their path is refused before it is opened: a FIFO would block the open or
// the read for ever, /dev/zero never ends, a device must not be replaced or chmodded. Symlinks are
// followed to the file they lead to.
import { chmodSync, constants, mkdirSync, type Stats } from "node:fs";
import { chmod, lstat, mkdir, open, readlink, realpath, stat, type FileHandle } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { errnoCode, fsError } from "./fsutil.js";

/** A file converge keeps: its name in messages ("state file") and what the user can do. */
export interface FileRole {
  what: string;
  detail: string;
}

/** Opening a FIFO without a writer does not wait; a terminal is never made the controlling one. */
const NO_WAIT = (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
/** As Linux: more links than this in a row is a loop. */
const MAX_LINKS = 40;

/** What a file that is not a regular file is, in words. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  return "a special file";
}

/** "state file X is a FIFO (named pipe), not a regular file", or "... links to Y, which is ...". */
export function notRegularError(role: FileRole, path: string, st: Stats, linkTarget: string | undefined): UserError {
  const is = linkTarget !== undefined ? `links to ${linkTarget}, which is ${kindOf(st)}` : `is ${kindOf(st)}`;
  return new UserError(error(`${role.what} ${path} ${is}, not a regular file`, { file: path, detail: role.detail }));
}

/** Where the symlink at `path` finally leads (undefined when `path` is not a symlink). */
async function linkTargetOf(path: string): Promise<string | undefined> {
  try {
    return (await lstat(path)).isSymbolicLink() ? await realpath(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The file at the end of `path`'s chain of symlinks (`path` itself when it is not one), which need
 * not exist: converge writes there, so that a symlinked state stays a symlink.
 */
export async function finalPath(path: string, role: FileRole): Promise<string> {
  let p = path;
  for (let links = 0; links <= MAX_LINKS; links++) {
    let st: Stats;
    try {
      st = await lstat(p);
    } catch (e) {
      if (errnoCode(e) === "ENOENT") return p;
      throw fsError(e, `read ${role.what}`, path);
    }
    if (!st.isSymbolicLink()) return p;
    try {
      // Relative to the link's real directory, as the kernel resolves it ("../x" after a linked directory).
      p = resolve(await realpath(dirname(p)), await readlink(p));
    } catch (e) {
      throw fsError(e, `read ${role.what}`, path);
    }
  }
  throw new UserError(error(`cannot read ${role.what} ${path}: too many levels of symbolic links`, { file: path }));
}

/** Its Stats when `path` is (or links to) a regular file, undefined when nothing is there; refuses anything else. */
export async function regularOrMissing(path: string, role: FileRole): Promise<Stats | undefined> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined; // also a dangling symlink: writing creates its target
    throw fsError(e, `read ${role.what}`, path);
  }
  if (!st.isFile()) throw notRegularError(role, path, st, await linkTargetOf(path));
  return st;
}

/**
 * Opens the regular file at `path` for reading; undefined when it does not exist. Anything else is
 * refused before it is opened, and (should one be swapped in meanwhile) after: the open does not
 * wait for a FIFO's writer.
 */
export async function openRegular(path: string, role: FileRole): Promise<FileHandle | undefined> {
  if (!(await regularOrMissing(path, role))) return undefined;
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | NO_WAIT);
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined;
    throw fsError(e, `read ${role.what}`, path);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegularError(role, path, st, await linkTargetOf(path));
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** The directories `mkdir -p dir` created: `dir` and its parents up to `first` (what mkdir returned). */
function created(dir: string, first: string | undefined): string[] {
  const out: string[] = [];
  for (let d = resolve(dir); first !== undefined; d = dirname(d)) {
    out.push(d);
    if (d === resolve(first) || dirname(d) === d) break;
  }
  return out;
}

/**
 * `mkdir -p dir`, the directories it creates mode 0700 whatever the umask (the state, a saved plan,
 * an emulator's world name who has access to what). Directories that exist already keep their
 * mode: they are the user's. Every directory converge creates for the user is made here.
 */
export async function makeDirs(dir: string): Promise<void> {
  for (const d of created(dir, await mkdir(dir, { recursive: true, mode: 0o700 }))) await chmod(d, 0o700);
}

/** `makeDirs` for synchronous callers (a saved plan, written once before exit). */
export function makeDirsSync(dir: string): void {
  for (const d of created(dir, mkdirSync(dir, { recursive: true, mode: 0o700 }))) chmodSync(d, 0o700);
}
