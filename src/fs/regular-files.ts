// The files converge keeps (state, backup, lock) are regular files in directories it creates 0700.
// Whatever else sits at their path is refused before it is opened: a FIFO would block the open or
// the read for ever, /dev/zero never ends, a device must not be replaced or chmodded. Symlinks are
// followed to the file they lead to. Every option that names a file converge writes (plan --out,
// import --generate --out, --state) is checked once, by writablePath, before the cloud is read.
import { chmodSync, constants, mkdirSync, statSync, type Stats } from "node:fs";
import { chmod, lstat, mkdir, open, readlink, realpath, rm, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { tempPathFor } from "./atomic-file.js";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { errnoCode, fsError } from "./errors.js";

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

/** A user error: `role`'s file at `path` cannot be written, for `reason`. */
function cannotWrite(role: FileRole, path: string, reason: string): UserError {
  return new UserError(error(`cannot write ${role.what} ${path}: ${reason}`, { file: path, detail: role.detail }));
}

/** The error's own words ("ENOENT: no such file or directory, open 'x'"), without the call and path. */
const reasonOf = (e: unknown): string => (e instanceof Error ? e.message.replace(/, \w+ '.*'$/s, "") : String(e));

/** The nearest directory at or above `dir` that exists; a file in the way is refused. */
async function nearestDir(dir: string, role: FileRole, path: string): Promise<string> {
  for (let d = dir; ; d = dirname(d)) {
    let st: Stats;
    try {
      st = await stat(d);
    } catch (e) {
      // ENOTDIR: a file further up is in the way; the walk reaches it.
      if (["ENOENT", "ENOTDIR"].includes(errnoCode(e) ?? "") && dirname(d) !== d) continue;
      throw cannotWrite(role, path, `${d}: ${reasonOf(e)}`);
    }
    if (st.isDirectory()) return d;
    throw cannotWrite(role, path, `${d} is not a directory`);
  }
}

/** Creates and removes a temp file in `dir`, as writing `target` (a temp file renamed over it) will. */
async function probeDir(dir: string, target: string, role: FileRole, path: string): Promise<void> {
  const probe = tempPathFor(join(dir, basename(target)), "probe-tmp");
  try {
    await (await open(probe, "wx", 0o600)).close();
  } catch (e) {
    // /proc: its directories exist, yet creating a file there fails with ENOENT.
    const reason = reasonOf(e);
    const enoent = errnoCode(e) === "ENOENT";
    throw cannotWrite(role, path, enoent ? `${dir} does not take new files (${reason})` : `${dir}: ${reason}`);
  }
  await rm(probe, { force: true });
}

/**
 * Where a file that an option names (plan --out, import --generate --out, --state) is written:
 * `path`, or the regular file its symlinks lead to (the link stays). Refuses, before anything is
 * read or written, what converge must not replace (a device, a FIFO, a socket, a directory, or a
 * link to one) and a path it cannot write (under a file, a name too long, /proc, an empty path).
 */
export async function writablePath(path: string, role: FileRole): Promise<string> {
  if (path === "") throw new UserError(error(`the ${role.what}'s path is empty`, { detail: role.detail }));
  let st: Stats | undefined;
  try {
    st = await stat(path);
  } catch (e) {
    const code = errnoCode(e);
    // Under a file: nearestDir names it ("x is not a directory"). ENOENT: also a dangling symlink.
    if (code === "ENOTDIR") await nearestDir(dirname(resolve(path)), role, path);
    if (code !== "ENOENT") throw cannotWrite(role, path, reasonOf(e));
  }
  if (st && !st.isFile()) throw notRegularError(role, path, st, await linkTargetOf(path));
  const target = await finalPath(path, role);
  await probeDir(await nearestDir(dirname(target), role, path), target, role, path);
  return target;
}

/** `dir` and those of its parents that do not exist, outermost first. */
function missingDirs(dir: string): string[] {
  const out: string[] = [];
  for (let d = resolve(dir); dirname(d) !== d; d = dirname(d)) {
    try {
      statSync(d);
      break;
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") throw e;
    }
    out.unshift(d);
  }
  return out;
}

/**
 * `mkdir -p dir`, the directories it creates mode 0700 whatever the umask (the state, a saved plan,
 * an emulator's world name who has access to what). Directories that exist already keep their
 * mode: they are the user's. Every directory converge creates for the user is made here, one at a
 * time: Node's recursive mkdir loops for ever under /proc (mkdir fails ENOENT in a directory that exists).
 */
export async function makeDirs(dir: string): Promise<void> {
  for (const d of missingDirs(dir)) {
    try {
      await mkdir(d, { mode: 0o700 });
    } catch (e) {
      if (errnoCode(e) === "EEXIST") continue; // made meanwhile by someone else: theirs
      throw e;
    }
    await chmod(d, 0o700);
  }
}

/** `makeDirs` for synchronous callers (a saved plan, written once before exit). */
export function makeDirsSync(dir: string): void {
  for (const d of missingDirs(dir)) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (e) {
      if (errnoCode(e) === "EEXIST") continue;
      throw e;
    }
    chmodSync(d, 0o700);
  }
}
