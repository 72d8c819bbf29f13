// Small filesystem helpers shared by the state store and its lock.
import { open, readFile } from "node:fs/promises";
import { UserError, error } from "../diagnostics/diagnostic.js";

export function errnoCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined;
}

// Failures the user can fix (permissions, read-only or full disk, a directory in the way).
const USER_FIXABLE = new Set([
  "EACCES",
  "EPERM",
  "EROFS",
  "ENOSPC",
  "EDQUOT",
  "ENOTDIR",
  "EISDIR",
  "ELOOP",
  "ENAMETOOLONG",
]);

/** Turns an fs error the user can act on into a UserError naming the file; returns others unchanged. */
export function fsError(e: unknown, action: string, file: string): unknown {
  const code = errnoCode(e);
  if (code && USER_FIXABLE.has(code)) {
    const msg = e instanceof Error ? e.message : String(e);
    return new UserError(error(`cannot ${action} ${file}: ${msg}`, { file }));
  }
  return e;
}

/** A text file's content, or undefined when there is no file; other failures as fsError's. */
export async function readTextIfExists(file: string, action: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined;
    throw fsError(e, action, file);
  }
}

/** fsync a directory so that renames and links in it are durable. A no-op where unsupported. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch (e) {
    // Windows cannot open directories; some filesystems refuse fsync on them.
    if (!["EISDIR", "EPERM", "EINVAL", "EBADF", "EACCES", "ENOTSUP", "EOPNOTSUPP"].includes(errnoCode(e) ?? ""))
      throw e;
  } finally {
    await fh?.close();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Whether a process with this pid exists on this host (EPERM: it exists but is not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) !== "ESRCH";
  }
}
