// The local state backend: one JSON file per stack, written atomically, previous version kept
// as {path}.backup, guarded by {path}.lock. A symlinked state file is written where it points:
// the backup, the lock and the temp files sit beside that file, and the link stays a link.
import { chmod, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import type { State, WriteIntent } from "../../generated/schemas.js";
import { IntentJournal } from "./intent-journal.js";
import { describeErrors, validate } from "../../schemas/index.js";
import {
  hasSealedResources,
  parsedState,
  serializeState,
  serializeStateBytes,
  stateProblems,
  withSerial,
} from "../format.js";
import { parseState } from "../parse-state.js";
import { errnoCode, fsError } from "../../fs/errors.js";
import { removeTempLeftovers, tempPathFor, writeFileAtomic } from "../../fs/atomic-file.js";
import { checkInputStats, InputFileError, MAX_DATA_BYTES } from "../../fs/input-file.js";
import { acquireLock, forceUnlock, type LockHandle, type LockOptions } from "./lock.js";
import { type StateStore, type StateVersion, type StoreLock, stateConflict, versionOf } from "../store.js";
import { withWriteGuard } from "./write-guard.js";
import { holding } from "./held-locks.js";
import { missingWorkspace } from "../workspace.js";
import { type FencedStore, type MoveFence, refuseWhileMoving } from "../move-fence.js";
import { readMovingFence, writeMovingFence } from "./moving-fence.js";

import { keepOtherLineage, linkOrCopy, type SeenBackup } from "./kept-backups.js";
import {
  finalPath,
  makeDirs,
  openRegular,
  regularOrMissing,
  writablePath,
  type FileRole,
} from "../../fs/regular-files.js";

/** Temp files of writes that crashed are removed once their process is gone and they are this old. */
const LEFTOVER_MIN_AGE_MS = 60_000;
/** ...or once they are this old whatever the pid says: a write takes milliseconds, and pids are
 *  reused (pid_max is 32,768 on many systems), so a live pid does not prove the writer is alive. */
const LEFTOVER_MAX_AGE_MS = 10 * 60_000;

const STATE_FILE: FileRole = {
  what: "state file",
  detail:
    "converge keeps the state in a regular file (or a symlink to one): it does not read from, replace or " +
    "change the permissions of anything else. Move it away, or name another file with --state.",
};

const STATE_BACKUP: FileRole = {
  what: "state backup",
  detail:
    "converge keeps the previous state there, as a regular file it " +
    "replaces at every write. Move it away and run again.",
};

/**
 * Makes {path}.backup the current contents of `path` (a state of `lineage`), replacing it in one
 * rename so that the backup is a complete version at every instant. A hard link shares the
 * (already durable) current file; where links are unsupported, a fsynced copy is used. No-op
 * without a current file. A backup of another lineage is moved aside first (./kept-backups.ts).
 */
async function backupCurrent(path: string, lineage: string, seen: SeenBackup | undefined): Promise<void> {
  const tmp = tempPathFor(path, "backup-tmp");
  try {
    await linkOrCopy(path, tmp);
  } catch (e) {
    await rm(tmp, { force: true });
    if (errnoCode(e) === "ENOENT") return;
    throw e;
  }
  try {
    await keepOtherLineage(path, lineage, STATE_BACKUP, seen);
    await chmod(tmp, 0o600);
    await rename(tmp, `${path}.backup`);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  // When the backup already was this same file (a writer killed after its backup, before its
  // state rename), rename(2) between two links of one file succeeds and leaves `tmp` in place.
  await rm(tmp, { force: true });
}

export interface StateStoreOptions {
  /** The stack the state belongs to: a state file that records another stack is refused. */
  stack?: string;
  /** A workspace other than `default`: it must exist (checked once, before the first use). */
  workspace?: { name: string; exists: () => Promise<boolean> };
  /** Throws when the state file is another state's (checked once, before the first use). */
  collision?: () => Promise<void>;
}

export class LocalStateStore implements StateStore, FencedStore {
  readonly path: string;
  private readonly stack: string | undefined;

  private readonly workspace: StateStoreOptions["workspace"];
  private workspaceChecked: Promise<void> | undefined;

  constructor(path: string, opts: StateStoreOptions) {
    this.path = path;
    this.stack = opts.stack;
    this.workspace = opts.workspace;
    this.collision = opts.collision;
  }

  private readonly collision: StateStoreOptions["collision"];

  /** A missing workspace is an error before anything is read or written. */
  private checkWorkspace(): Promise<void> {
    const ws = this.workspace;
    const collision = this.collision;
    this.workspaceChecked ??= (async () => {
      if (ws && !(await ws.exists())) throw missingWorkspace(ws.name, this.path);
      await collision?.();
    })();
    return this.workspaceChecked;
  }

  /** The file the state is in: `path`, or where its symlinks lead (it need not exist yet). */
  private target(): Promise<string> {
    return finalPath(this.path, STATE_FILE);
  }

  /** Refuses a state file or backup that is not a regular file, before anything is changed. */
  private async checkFiles(target: string): Promise<void> {
    await regularOrMissing(this.path, STATE_FILE);
    await regularOrMissing(`${target}.backup`, STATE_BACKUP);
  }

  async read(): Promise<State | undefined> {
    await this.checkWorkspace();
    const fh = await openRegular(this.path, STATE_FILE);
    if (!fh) return undefined;
    let text: string;
    try {
      checkInputStats(await fh.stat(), this.path, STATE_FILE.what, MAX_DATA_BYTES);
      text = await fh.readFile("utf8");
    } catch (e) {
      if (e instanceof InputFileError) throw e.userError();
      throw fsError(e, "read state file", this.path);
    } finally {
      await fh.close();
    }
    const state = parseState(text, this.path);
    if (this.stack !== undefined && state.stack !== this.stack) {
      throw new UserError(
        error(`state file ${this.path} belongs to stack "${state.stack}", not to stack "${this.stack}"`, {
          file: this.path,
          detail:
            `Each stack needs its own state file: is --state (or a copied state file) pointing at ` +
            `stack "${state.stack}"'s state? The state file is left as it is.`,
        }),
      );
    }
    return state;
  }

  describe(): string {
    return this.path;
  }

  async write(next: State, expect: StateVersion | undefined): Promise<State> {
    // Resources sealed by apply (which saves after steps) are serialised, checked and parsed
    // once, not at every save: for a large state that was most of apply's time.
    const parts = hasSealedResources(next);
    // An invalid state is a bug in converge, not something the user can fix.
    const nextText = parts ? undefined : serializeState(next);
    const value = nextText === undefined ? undefined : (JSON.parse(nextText) as State);
    const invalid = value === undefined ? stateProblems(next) : validate("state.schema.json", value);
    if (invalid.length > 0)
      throw new Error(`refusing to write an invalid state to ${this.path}: ${describeErrors(invalid)}`);
    if (this.stack !== undefined && next.stack !== this.stack)
      throw new Error(
        `refusing to write a state of stack "${next.stack}" to ${this.path}, the state of stack "${this.stack}"`,
      );

    await this.checkWorkspace();
    const target = await this.target();
    const dir = dirname(target);
    try {
      await makeDirs(dir);
    } catch (e) {
      throw fsError(e, "create directory", dir);
    }
    await this.checkFiles(target);
    // Compare-and-swap: the store must still hold the version the writer read (the guard makes
    // the check and the rename one step for concurrent writers).
    const written = await withWriteGuard(target, () => this.swap(target, next, expect, nextText));
    await removeTempLeftovers(target, { minAgeMs: LEFTOVER_MIN_AGE_MS, maxAgeMs: LEFTOVER_MAX_AGE_MS });
    if (!value) return parsedState(written);
    // JSON.parse(text), which differs from `value` only in the serial.
    value.serial = written.serial;
    return value;
  }

  /** Checks the stored version against `expect`, then replaces the file (backup kept). */
  private async swap(
    target: string,
    next: State,
    expect: StateVersion | undefined,
    nextText: string | undefined,
  ): Promise<State> {
    const current = await this.readCurrent(target);
    if (current && current.lineage !== next.lineage) throw stateConflict(this.path, current, versionOf(next), next);
    if (current ? !expect || current.lineage !== expect.lineage || current.serial !== expect.serial : expect) {
      throw stateConflict(this.path, current ?? { lineage: next.lineage, serial: 0 }, expect, next);
    }
    // With no state yet, a pushed state keeps counting from its own serial.
    const written: State = { ...next, serial: (expect?.serial ?? next.serial) + 1 };
    if (!Number.isSafeInteger(written.serial)) {
      throw new UserError(
        error(
          `state file ${this.path} has serial ${written.serial - 1}, the largest ` +
            `converge can count: it cannot be written again`,
          { file: this.path },
        ),
      );
    }
    // serializeState(written): the same text but for the serial (serialising a large state twice
    // was a hot spot of apply, which saves after every step); with sealed resources, its bytes
    // in pieces (each resource's encoded once).
    const data =
      (nextText !== undefined ? withSerial(nextText, next.serial, written.serial) : undefined) ??
      serializeStateBytes(written);

    try {
      await writeFileAtomic(target, data, { beforeRename: () => backupCurrent(target, next.lineage, this.backupSeen) });
    } catch (e) {
      throw fsError(e, "write state file", this.path);
    }
    await this.remember(written, target, current ? current.lineage : undefined);
    return written;
  }

  /**
   * What the file holds now: `read()`, unless the file is the one this store last wrote (same
   * inode, size and change time), whose lineage and serial it remembers.
   */
  private async readCurrent(target: string): Promise<Pick<State, "lineage" | "serial" | "stack"> | undefined> {
    const known = this.lastWritten;
    if (known) {
      const st = await stat(target, { bigint: true }).catch(() => undefined);
      if (
        st &&
        st.ino === known.ino &&
        st.size === known.size &&
        st.ctimeNs === known.ctimeNs &&
        st.mtimeNs === known.mtimeNs
      )
        return known.state;
    }
    return this.read();
  }

  private lastWritten:
    | {
        ino: bigint;
        size: bigint;
        ctimeNs: bigint;
        mtimeNs: bigint;
        state: Pick<State, "lineage" | "serial" | "stack">;
      }
    | undefined;

  /** The backup this store last made (the version of lineage `backedUp` it replaced), so that
   *  the next write need not read it again to know its lineage. */
  private backupSeen: SeenBackup | undefined;

  private async remember(written: State, target: string, backedUp: string | undefined): Promise<void> {
    this.lastWritten = undefined;
    const st = await stat(target, { bigint: true }).catch(() => undefined);
    if (st)
      this.lastWritten = {
        ino: st.ino,
        size: st.size,
        ctimeNs: st.ctimeNs,
        mtimeNs: st.mtimeNs,
        state: { lineage: written.lineage, serial: written.serial, stack: written.stack },
      };
    this.backupSeen = undefined;
    const b =
      backedUp === undefined ? undefined : await stat(`${target}.backup`, { bigint: true }).catch(() => undefined);
    if (b && backedUp !== undefined)
      this.backupSeen = { ino: b.ino, size: b.size, ctimeNs: b.ctimeNs, mtimeNs: b.mtimeNs, lineage: backedUp };
  }

  /** The lock sits beside the file the state is in: one lock per state, whatever links name it. */
  async lock(operation: string, opts?: LockOptions): Promise<LockHandle & StoreLock> {
    await this.checkWorkspace();
    // Checked before the lock, so before any cloud call: a write would refuse them at the end.
    const target = await writablePath(this.path, STATE_FILE);
    await this.checkFiles(target);
    const handle = await acquireLock(this.path, `${target}.lock`, operation, opts);
    await refuseWhileMoving(
      operation,
      () => this.movingTo(),
      () => handle.release(),
      this.path,
    );
    const i = handle.info;
    return {
      ...handle,
      release: () => handle.release(),
      holder: { id: i.id, who: i.holder, operation: i.operation, since: i.time, version: i.version },
    };
  }

  /** {state file}.moving: the fence of an unfinished `state migrate` (./moving-fence.ts). */
  movingTo(): Promise<MoveFence | undefined> {
    return readMovingFence(this.path);
  }

  fenceForMove(fence: MoveFence): Promise<void> {
    return writeMovingFence(this.path, fence);
  }

  private journal: IntentJournal | undefined;

  /** {state file}.intents, beside the file the state is in (./intent-journal.ts). */
  private async intents(): Promise<IntentJournal> {
    await this.checkWorkspace();
    return (this.journal ??= new IntentJournal(`${await this.target()}.intents`));
  }

  async recordIntents(intents: readonly WriteIntent[]): Promise<void> {
    if (intents.length) await (await this.intents()).record(intents);
  }

  async pendingIntents(): Promise<WriteIntent[]> {
    return (await this.intents()).pending();
  }

  async clearIntents(ids: readonly string[]): Promise<void> {
    if (ids.length) await (await this.intents()).clear(ids);
  }

  async forceUnlock(id: string): Promise<void> {
    return forceUnlock(`${await this.target()}.lock`, id);
  }
}

/** The default backend: a JSON file at `path` (see defaultStatePath), for `opts.stack` when given. */
export function localStateStore(path: string, opts: StateStoreOptions = {}): LocalStateStore {
  return new LocalStateStore(path, opts);
}

/** Locks `store`, runs `fn`, and always releases the lock, also when `fn` throws. */
export async function withLock<T>(
  store: StateStore,
  operation: string,
  opts: LockOptions | undefined,
  fn: (lock: StoreLock) => Promise<T> | T,
): Promise<T> {
  const lock = await store.lock(operation, opts);
  // Recorded while held: a command stopped by a signal releases it before it exits (./held-locks.ts).
  const forget = holding(lock);
  try {
    let result: T;
    try {
      result = await fn(lock);
    } catch (e) {
      await lock.release().catch(() => undefined); // keep fn's error, not a release failure
      throw e;
    }
    await lock.release();
    return result;
  } finally {
    forget();
  }
}
