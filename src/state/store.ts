// The state-store contract: what every backend (the local file, PostgreSQL) provides, and
// what a conformance suite (test/state/conformance.ts, after Terraform's statemgr TestFull) checks
// for each. No file paths or process ids cross it: a store describes itself, and a lock describes
// its holder.
import { error, UserError } from "../diagnostics/diagnostic.js";
import type { State, WriteIntent } from "../generated/schemas.js";
import type { ClaimConflict, OwnedClaim, ResourceClaim } from "../claims/claims.js";
import type { ProjectIds } from "../cloud/names.js";

/** The version of a state a writer last saw: a write succeeds only while the store still holds it. */
export interface StateVersion {
  lineage: string;
  serial: number;
}

/** Who holds a lock, for the message a second writer gets. */
export interface LockHolder {
  /** Random ID; `converge force-unlock ID` needs it. */
  id: string;
  /** user@host */
  who: string;
  /** The command holding it: "apply", "import", … */
  operation: string;
  /** When it was taken (RFC 3339). */
  since: string;
  /** converge version of the holder. */
  version: string;
}

export interface StoreLock {
  holder: LockHolder;
  /** Releases the lock if it is still held by this handle. Idempotent. */
  release(): Promise<void>;
}

/** What a backend that keeps history records with a write (the local file ignores it). */
export interface WriteMeta {
  /** The command writing: "apply", "import", "state rm", … (default: the lock's operation). */
  operation?: string;
  /** The digest of the plan being applied ("sha256:…"), when known. */
  planDigest?: string;
  /** The plan's access summary, when known: grants added and removed. */
  access?: { granted: number; revoked: number };
  /** The owner-approval guardrails approved for this apply (--approve), and by whom. */
  approvals?: GuardrailApproval[];
}

/** An owner-approval guardrail approved for an apply, and who approved it (CONVERGE_ACTOR). */
export interface GuardrailApproval {
  rule: string;
  actor: string;
}

/** One version in a backend's history. */
export interface HistoryRecord {
  serial: number;
  lineage: string;
  /** When it was written (RFC 3339). */
  written: string;
  /** CONVERGE_ACTOR of the writer, else its OS user. */
  actor: string;
  host: string;
  /** The command that wrote it: "apply", "state push", … */
  operation: string;
  planDigest?: string;
  /** The applied plan's access summary, when known. */
  access?: { granted: number; revoked: number };
  /** The owner-approval guardrails approved for the apply that wrote it. */
  approvals?: GuardrailApproval[];
  convergeVersion: string;
}

/** What `drift --watch` records: a drift found (new, or changed), or one that is gone. */
export interface DriftEvent {
  event: "found" | "cleared";
  /** The finding (src/plan/drift.ts), as the report shows it: no secret in it. */
  finding: { class: string; object: string; role: string; member: string };
}

/** A recorded drift event, with who recorded it and when. */
export interface DriftEventRecord extends DriftEvent {
  /** RFC 3339. */
  recorded: string;
  actor: string;
  host: string;
  /** The serial of the state the check compared with (0: none yet). */
  serial: number;
}

/** The drift events of one (stack, workspace) on PostgreSQL. */
export interface DriftLog {
  record(events: readonly DriftEvent[], serial: number): Promise<void>;
  /** Oldest first. */
  read(): Promise<DriftEventRecord[]>;
}

/** The state itself: where it lives, reading it, and compare-and-swap writes. */
export interface StateData {
  /**
   * Where the state lives, for messages: "state/quickstart.json", `postgres (schema converge) stack "x" workspace
   * "default"`; never a secret.
   */
  describe(): string;
  /** The current state; undefined when there is none yet. */
  read(): Promise<State | undefined>;
  /**
   * Compare-and-swap: writes `next` if the store still holds `expect` (undefined: no state yet),
   * atomically, and returns what was written (serial = expect's + 1, lineage kept). Otherwise a
   * `state/conflict` user error, and nothing is written. `meta` is recorded where the backend
   * keeps history.
   */
  write(next: State, expect: StateVersion | undefined, meta?: WriteMeta): Promise<State>;
}

/** One writer at a time. */
export interface StateLocking {
  /** A second writer fails at once naming the holder, or waits up to timeoutMs. */
  lock(operation: string, opts?: { timeoutMs?: number }): Promise<StoreLock>;
  /** Clears a lock whose holder cannot be checked (another host), given its ID. */
  forceUnlock(id: string): Promise<void>;
}

/** Write-ahead intents (../apply/intents.ts). */
export interface IntentLog {
  /** Records them durably (a file fsynced beside the state, a committed row) before it returns:
   *  the cloud writes they describe start only then. */
  recordIntents(intents: readonly WriteIntent[]): Promise<void>;
  /** The intents recorded and not cleared, in the order they were recorded. */
  pendingIntents(): Promise<WriteIntent[]>;
  /** The intents with these IDs are settled: a saved state covers them, or they did not land. */
  clearIntents(ids: readonly string[]): Promise<void>;
}

/** Backends that keep history: the versions written. */
export interface StateHistory {
  /** The versions written, oldest first. */
  history(): Promise<HistoryRecord[]>;
  /** The version written with `serial` (of the current lineage when several were), if kept. */
  version(serial: number): Promise<State | undefined>;
}

/**
 * Backends that see every stack (PostgreSQL): the claims of each state (../claims/), recorded with
 * every write of it. `projectIds` (project numbers → IDs): a claim recorded with a project's number
 * is compared as the claim of its ID.
 */
export interface ClaimRegistry {
  /** The claims recorded by other stacks, or other workspaces of this one, that conflict with
   *  `claims` (a plan's). */
  conflicts(claims: readonly ResourceClaim[], projectIds?: ProjectIds): Promise<ClaimConflict[]>;
  /** Under the store's lock: records `claims` (an apply's, before its first write) as this state's
   *  until the lock is released, in one step with the check, unless another stack or workspace
   *  claims or reserves a conflicting grant: then nothing is recorded and the conflicts are returned. */
  reserve(claims: readonly ResourceClaim[], projectIds?: ProjectIds): Promise<ClaimConflict[]>;
  /** The project numbers in the objects claims name (claims recorded before project numbers were
   *  resolved to IDs), for `projectIds` above. */
  projectNumbers(): Promise<string[]>;
  /** Every recorded claim, of every stack and workspace. */
  all(): Promise<OwnedClaim[]>;
}

/** The state contract: what every backend does, and the capabilities some have (a backend without
 *  one, such as the local file, leaves it out). The conformance suite checks each backend. */
export interface StateStore extends StateData, StateLocking, IntentLog, Partial<StateHistory> {
  /** What `drift --watch` found ({schema}.drift_events on PostgreSQL; the local file keeps none). */
  readonly drift?: DriftLog;
  /** Cross-stack claims (PostgreSQL). */
  readonly claims?: ClaimRegistry;
}

/** The version a state was read at (or written as). */
export function versionOf(state: State | undefined): StateVersion | undefined {
  return state ? { lineage: state.lineage, serial: state.serial } : undefined;
}

/** The user error of a write whose expectation the store no longer holds. */
export function stateConflict(
  where: string,
  stored: StateVersion & { stack?: string },
  expect: StateVersion | undefined,
  next: State,
  backend: "file" | "database" = "file",
): UserError {
  if (expect && stored.lineage !== expect.lineage) {
    return new UserError(
      error(
        `${backend === "file" ? "state file" : "the state in"} ${where} belongs to another state (lineage ` +
          `${stored.lineage}${stored.stack !== undefined ? `, stack "${stored.stack}"` : ""}), not to the one ` +
          `being written (lineage ${next.lineage}, stack "${next.stack}"); refusing to overwrite it`,
        {
          code: "state/conflict",
          file: where,
          detail:
            backend === "file"
              ? "Is --state pointing at another stack's state file? Each stack needs its own state file."
              : "Another state of this stack (a new lineage) was stored since this one was read. " +
                "Run the command again: it reads the current state first.",
        },
      ),
    );
  }
  const was = expect ? `serial ${expect.serial}` : "no state";
  return new UserError(
    error(
      `the state in ${where} changed since it was read (it was ${was}, it is now serial ` +
        `${stored.serial}): another writer saved it; nothing was written`,
      {
        code: "state/conflict",
        file: where,
        detail: "Run the command again: it reads the current state first.",
      },
    ),
  );
}
