// The state lock: {state}.lock, created exclusively, holding a JSON LockInfo.
//
// Who may delete a lock file:
//  - its owner (LockHandle.release), only while the id in the file is still its own;
//  - anyone who finds it stale (taken on this host by a process certainly gone: its PID unused,
//    or used by a process that started at another time, see process-identity.ts; or unreadable
//    for longer than a writer could take to fill it), and the user through force-unlock with the
//    matching id. When converge cannot tell, the lock stands.
// The last two are "compare and delete" operations on a file someone else may be replacing at the
// same moment. They run while holding an exclusive marker file named after the lock being
// removed ({lock}.takeover-{hash of its id}), and re-read the lock inside it: only one process at
// a time can be between "the lock is still X" and "delete X", and while X exists nobody can
// create another lock, so a takeover can never delete a lock that someone has just taken.
import { createHash, randomUUID } from "node:crypto";
import { lstat, open, readdir, rm, stat, unlink } from "node:fs/promises";
import { hostname as osHostname, userInfo } from "node:os";
import { basename, dirname, join } from "node:path";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { TOOL_VERSION } from "../../base/version.js";
import { errnoCode, fsError, pidAlive, sleep } from "../../fs/errors.js";
import { isProcessIdentity, processIdentity, processState, type ProcessIdentity } from "./process-identity.js";
import { finalPath, makeDirs, openRegular, type FileRole } from "../../fs/regular-files.js";

export interface LockInfo {
  /** Random UUID; `converge force-unlock ID` needs it. */
  id: string;
  /** user@hostname */
  holder: string;
  /** The command holding the lock: "apply", "import", … */
  operation: string;
  /** When the lock was taken (RFC 3339). */
  time: string;
  pid: number;
  hostname: string;
  /** converge version of the holder. */
  version: string;
  /** The state file the lock guards. */
  path: string;
  /** Which process `pid` was, when known (Linux): tells the holder from a later process given the
   *  same PID. Absent in locks of older versions and on other systems. */
  process?: ProcessIdentity;
}

export interface LockHandle {
  info: LockInfo;
  /** Removes the lock if it is still ours. Idempotent. */
  release(): Promise<void>;
}

export interface LockOptions {
  /** Wait up to this long for another holder to release (default 0: fail at once). */
  timeoutMs?: number;
}

/**
 * An unreadable lock file (empty, or not a LockInfo) may be one that is being written right now;
 * once it has stayed the same for this long it was left by a process killed between creating and
 * filling it. Measured on our own clock: the file's mtime may come from another clock (NFS).
 */
const UNREADABLE_GRACE_MS = 2_000;
/** A takeover marker older than this belongs to a process that died mid-takeover. */
const MARKER_STALE_MS = 10_000;
const MAX_MARKER_GENERATIONS = 8;

type LockRead =
  | { kind: "missing" }
  | { kind: "held"; info: LockInfo; key: string }
  | { kind: "unreadable"; key: string; reason: string };

/** The OS user running converge. */
export function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? `uid${process.getuid?.() ?? "?"}`;
  }
}

function isLockInfo(v: unknown): v is LockInfo {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.id === "string" &&
    o.id !== "" &&
    typeof o.hostname === "string" &&
    typeof o.pid === "number" &&
    Number.isInteger(o.pid) &&
    o.pid > 0
  );
}

function lockRole(lockPath: string): FileRole {
  return {
    what: "lock file",
    detail:
      `converge creates the lock file itself, as a regular file, and removes it when done: it does not wait ` +
      `on, read, replace or remove anything else there. If no converge command is running, remove ${lockPath} ` +
      `and run again.`,
  };
}

/** A symlink leading nowhere: creating the lock (O_EXCL) fails as if it existed, reading it as if it did not. */
async function danglingLinkError(lockPath: string): Promise<UserError | undefined> {
  const st = await lstat(lockPath).catch(() => undefined);
  if (!st?.isSymbolicLink()) return undefined;
  const role = lockRole(lockPath);
  return new UserError(
    error(`${role.what} ${lockPath} links to ${await finalPath(lockPath, role)}, which does not exist`, {
      file: lockPath,
      detail: role.detail,
    }),
  );
}

async function readLock(lockPath: string): Promise<LockRead> {
  const fh = await openRegular(lockPath, lockRole(lockPath));
  if (!fh) {
    const dangling = await danglingLinkError(lockPath);
    if (dangling) throw dangling;
    return { kind: "missing" };
  }
  try {
    const st = await fh.stat();
    const text = await fh.readFile("utf8");
    let reason: string;
    try {
      const v: unknown = JSON.parse(text);
      if (isLockInfo(v)) return { kind: "held", info: v, key: `id:${v.id}` };
      reason = "it does not hold a lock ID, pid and hostname";
    } catch (e) {
      reason =
        text.trim() === "" ? "it is empty" : `it is not valid JSON (${e instanceof Error ? e.message : String(e)})`;
    }
    const key = `file:${st.dev}:${st.ino}:${st.mtimeMs}:${st.size}`;
    return { kind: "unreadable", key, reason };
  } catch (e) {
    throw fsError(e, "read lock file", lockPath);
  } finally {
    await fh.close();
  }
}

function describeHolder(info: LockInfo): string {
  const holder = info.holder || `?@${info.hostname}`;
  return `${holder} (${info.operation || "unknown operation"}, pid ${info.pid}, since ${info.time || "unknown time"})`;
}

/** What is known of the holder process, for the lock error. */
function holderProcessText(info: LockInfo): string {
  if (info.hostname !== osHostname())
    return (
      `The lock was taken on host ${info.hostname}; converge cannot check ` +
      `from here whether that process is still running.`
    );
  return holderState(info) === "running"
    ? `The holder process ${info.pid} is still running on this host.`
    : `The lock is held by process ${info.pid}, which may be another process now: a process ID is reused once ` +
        `its process has exited, and converge cannot tell whether this one is the holder.`;
}

/** The holder's state, on this host (see processState). */
function holderState(info: LockInfo): "running" | "gone" | "unknown" {
  return processState(info.pid, isProcessIdentity(info.process) ? info.process : undefined, pidAlive);
}

/** `waitedMs`: how long it waited, when a --lock-timeout was given (else the advice to give one). */
function lockedError(info: LockInfo, lockPath: string, waitedMs: number | undefined): UserError {
  const details = [
    waitedMs !== undefined
      ? `Waited ${(waitedMs / 1000).toFixed(1)}s for the lock.`
      : "Use --lock-timeout to wait for it.",
    holderProcessText(info),
    `Lock file: ${lockPath}${info.version ? ` (written by converge ${info.version})` : ""}.`,
  ];
  return new UserError(
    error(
      `state is locked by ${describeHolder(info)}; lock ID ${info.id} — if that ` +
        `process is gone, run: converge force-unlock ${info.id}`,
      { file: lockPath, detail: details.join(" ") },
    ),
  );
}

/** Creates the lock file exclusively; false when one exists already. */
async function tryCreate(lockPath: string, info: LockInfo): Promise<boolean> {
  let fh;
  try {
    fh = await open(lockPath, "wx", 0o600);
  } catch (e) {
    if (errnoCode(e) === "EEXIST") return false;
    throw fsError(e, "create lock file", lockPath);
  }
  try {
    await fh.chmod(0o600); // whatever the umask
    await fh.writeFile(JSON.stringify(info, null, 2) + "\n");
    await fh.sync();
    await fh.close();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(lockPath).catch(() => undefined);
    throw fsError(e, "write lock file", lockPath);
  }
  return true;
}

async function createMarker(file: string): Promise<"created" | "exists"> {
  try {
    const fh = await open(file, "wx", 0o600);
    try {
      await fh.writeFile(
        JSON.stringify({ pid: process.pid, hostname: osHostname(), time: new Date().toISOString() }) + "\n",
      );
    } finally {
      await fh.close();
    }
    return "created";
  } catch (e) {
    if (errnoCode(e) === "EEXIST") return "exists";
    throw fsError(e, "create lock takeover file", file);
  }
}

function markerBase(lockPath: string, key: string): string {
  return `${lockPath}.takeover-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
}

/**
 * Takes the exclusive right to remove the lock identified by `key`. Returns the marker file to
 * delete afterwards, or undefined when another process is doing it right now.
 */
async function acquireMarker(lockPath: string, key: string): Promise<string | undefined> {
  const base = markerBase(lockPath, key);
  for (let gen = 0; gen < MAX_MARKER_GENERATIONS;) {
    const file = gen === 0 ? base : `${base}.${gen}`;
    if ((await createMarker(file)) === "created") return file;
    let age: number;
    try {
      age = Date.now() - (await stat(file)).mtimeMs;
    } catch (e) {
      if (errnoCode(e) === "ENOENT") continue; // finished meanwhile: try the same name again
      throw fsError(e, "read lock takeover file", file);
    }
    if (age < MARKER_STALE_MS) return undefined; // someone is taking over right now
    gen++; // left by a process that died mid-takeover: use the next name
  }
  throw new UserError(
    error(`cannot take over the stale lock ${lockPath}: too many abandoned takeover files (${base}*)`, {
      file: lockPath,
      detail: `If no converge command is running, delete ${lockPath} and ${base}*.`,
    }),
  );
}

/**
 * Removes the lock file if it is still the one identified by `key` (see the top of this file).
 * "changed": it is gone or is another lock now; "busy": another process is removing it.
 */
async function removeLockIf(lockPath: string, key: string): Promise<"removed" | "changed" | "busy"> {
  const marker = await acquireMarker(lockPath, key);
  if (marker === undefined) return "busy";
  let result: "removed" | "changed" = "changed";
  try {
    const cur = await readLock(lockPath);
    if (cur.kind !== "missing" && cur.key === key) {
      try {
        await unlink(lockPath);
        result = "removed";
      } catch (e) {
        if (errnoCode(e) !== "ENOENT") throw fsError(e, "remove lock file", lockPath);
      }
    }
  } finally {
    await rm(marker, { force: true });
  }
  if (result === "removed") {
    // Markers of earlier, abandoned takeovers of this same lock are useless now.
    const base = basename(markerBase(lockPath, key));
    const dir = dirname(lockPath);
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => n.startsWith(base)).map((n) => rm(join(dir, n), { force: true })));
  }
  return result;
}

/** Stale: taken on this host by a process that is certainly gone (never when unsure). */
function isStale(info: LockInfo): boolean {
  return info.hostname === osHostname() && holderState(info) === "gone";
}

/** Takes the lock at `lockPath` for the state file `statePath`. */
export async function acquireLock(
  statePath: string,
  lockPath: string,
  operation: string,
  opts: LockOptions = {},
): Promise<LockHandle> {
  const started = Date.now();
  const deadline = started + Math.max(0, opts.timeoutMs ?? 0);
  try {
    await makeDirs(dirname(lockPath));
  } catch (e) {
    throw fsError(e, "create directory", dirname(lockPath));
  }
  const host = osHostname();
  const info: LockInfo = {
    id: randomUUID(),
    holder: `${currentUser()}@${host}`,
    operation,
    time: new Date().toISOString(),
    pid: process.pid,
    hostname: host,
    version: TOOL_VERSION,
    path: statePath,
  };
  const self = processIdentity(process.pid);
  if (self) info.process = self;
  let unreadable: { key: string; since: number } | undefined;
  for (;;) {
    info.time = new Date().toISOString();
    if (await tryCreate(lockPath, info)) return lockHandle(lockPath, info);
    const cur = await readLock(lockPath);
    if (cur.kind === "missing") continue; // released in between: try again at once
    if (cur.kind === "unreadable") {
      if (unreadable?.key !== cur.key) unreadable = { key: cur.key, since: Date.now() };
      if (Date.now() - unreadable.since < UNREADABLE_GRACE_MS) {
        await sleep(25); // most likely being written right now
        continue;
      }
    }
    if (cur.kind === "unreadable" || isStale(cur.info)) {
      if ((await removeLockIf(lockPath, cur.key)) === "busy") await sleep(25);
      continue;
    }
    const now = Date.now();
    if (now >= deadline) throw lockedError(cur.info, lockPath, opts.timeoutMs ? now - started : undefined);
    await sleep(Math.min(100 + Math.random() * 150, deadline - now));
  }
}

function lockHandle(lockPath: string, info: LockInfo): LockHandle {
  let releasing: Promise<void> | undefined;
  const release = async (): Promise<void> => {
    const cur = await readLock(lockPath);
    if (cur.kind !== "held" || cur.info.id !== info.id) return; // already gone, or not ours any more
    try {
      await unlink(lockPath);
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") throw fsError(e, "remove lock file", lockPath);
    }
  };
  return {
    info: { ...info },
    release(): Promise<void> {
      releasing ??= release().catch((e: unknown) => {
        releasing = undefined; // let the caller retry a failed release
        throw e;
      });
      return releasing;
    },
  };
}

/** Removes the lock at `lockPath` if its ID is `id`; UserError when there is none or it differs. */
export async function forceUnlock(lockPath: string, id: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const cur = await readLock(lockPath);
    if (cur.kind === "missing") {
      throw new UserError(error(`no lock: the state is not locked (${lockPath} does not exist)`, { file: lockPath }));
    }
    if (cur.kind === "unreadable") {
      throw new UserError(
        error(`the lock file ${lockPath} is unreadable: ${cur.reason}`, {
          file: lockPath,
          detail: `It has no lock ID to match. If no converge command is running, delete ${lockPath}.`,
        }),
      );
    }
    if (cur.info.id !== id) {
      throw new UserError(
        error(
          `lock ID ${id} does not match the current lock: the state is locked by ` +
            `${describeHolder(cur.info)} with lock ID ${cur.info.id}`,
          {
            file: lockPath,
            detail: `To remove that lock, run: converge force-unlock ${cur.info.id}`,
          },
        ),
      );
    }
    const result = await removeLockIf(lockPath, cur.key);
    if (result !== "busy") return; // removed, or already gone
    if (attempt > 200) throw new Error(`force-unlock: lock ${lockPath} stayed busy`);
    await sleep(25);
  }
}
