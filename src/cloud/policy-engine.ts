// The IAM policy engine: one read-modify-write with optimistic concurrency. Reads the policy
// (version 3), applies the modifications with the pure `applyModifications`, writes with the etag
// it read, and on 409 ABORTED re-reads and re-applies with bounded exponential backoff + jitter.
// Once its signal aborts (Ctrl-C) it starts no read, write or round: a policy read but not yet
// written stays unwritten (the call rejects with a CANCELLED CloudError and changed nothing).
import type { Policy } from "../generated/schemas.js";
import { applyModifications, editsAuditConfigs, type PolicyModification } from "../iam/index.js";
import { unplannedEffects } from "../iam/policy-effect.js";
import { policyMethodId, type CloudClient, type PolicyKind } from "./client.js";
import { CloudError, interruptedError, isCloudError } from "./errors.js";
import type { PolicyRoundEvent } from "./cloud-events.js";
import { backoffDelay, defaultSleep, waitUnlessAborted } from "./retry.js";
import { listed } from "../diagnostics/listed.js";

export interface ModifyResult {
  /** The policy as it is now on the server: the one setIamPolicy returned, or the one read when nothing changed. */
  policy: Policy;
  /** The policy the last round started from: the plan's copy, or the one read again after a
   *  conflict (a grant found there, not in the plan's copy, was made by someone else). */
  base: Policy;
  /** True when this call's last round wrote the policy. */
  written: boolean;
  /** Read-modify-write rounds made (1 when there was no conflict). */
  attempts: number;
  /** getIamPolicy calls made. */
  reads: number;
  /** setIamPolicy calls made (ABORTED ones included). */
  writes: number;
}

export interface ModifyOptions {
  /** Rounds before giving up on repeated ABORTED; default 12. */
  maxAttempts?: number;
  /** Backoff base between rounds (ms); default 20. */
  baseDelayMs?: number;
  /** Backoff cap (ms); default 2 000. */
  maxDelayMs?: number;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * An already-read policy to try first: saves one read when it is still current (its etag is
   * checked by the server). On ABORTED the engine re-reads. When the modifications make no change
   * to it, the engine re-reads once to confirm, so a stale copy never hides a needed write.
   * It is also the plan's copy: when the policy read again would make the modifications grant or
   * revoke anything they do not on this copy, nothing is written and the call fails
   * (FAILED_PRECONDITION): the plan the reviewer approved did not show that change.
   */
  initial?: Policy;
  /** Once aborted, nothing more is sent (a read or write in flight finishes). */
  signal?: AbortSignal;
  /**
   * Without `initial`: the policy as the plan saw it without reading it (a plan made without
   * refresh sees the state's view). The policy read is then held to the same rule as one read
   * again after a conflict: no grant, revocation or audit log change beyond the plan's.
   */
  planned?: Policy;
}

const MODIFY_DEFAULTS = { maxAttempts: 12, baseDelayMs: 20, maxDelayMs: 2_000 } as const;

export async function modifyPolicy(
  client: CloudClient,
  kind: PolicyKind,
  name: string,
  mods: PolicyModification[],
  opts: ModifyOptions = {},
): Promise<ModifyResult> {
  const { maxAttempts, backoff, sleep } = settings(opts);
  const signal = opts.signal;
  const call = signal ? { signal } : {};
  const started = Date.now();

  let reads = 0;
  let writes = 0;
  let current: Policy | undefined = opts.initial;
  let fresh = false; // whether `current` was read by this call
  let lastAbort: CloudError | undefined;
  // A write of this call that may have landed, not yet settled by a read: the error of the write
  // whose answer was lost (a 5xx, a reset; or a 409 after a retry of it).
  let unsettled: CloudError | undefined;
  const emit = (round: number, outcome: PolicyRoundEvent["outcome"], delayMs?: number) =>
    client.emit(roundEvent(kind, name, round, maxAttempts, outcome, delayMs));
  // Before each call: after an abort, this call and every later one are not sent.
  const stopIfAborted = (operation: "getIamPolicy" | "setIamPolicy") => {
    if (signal?.aborted)
      throw stopped({ kind, name, operation, signal }, { reads, writes }, unsettled ?? lastAbort, !!unsettled);
  };

  for (let round = 1; round <= maxAttempts; round++) {
    let landed = false;
    if (!current) {
      stopIfAborted("getIamPolicy");
      current = await client.getIamPolicy(kind, name, call).catch((e: unknown) => {
        throw unsettled ? stillUncertain(e) : e;
      });
      reads++;
      fresh = true;
      // A write whose answer was lost is settled by this read: its edits are there (it landed),
      // or not (it did not, and the round writes them again with the fresh etag).
      landed = unsettled !== undefined;
      unsettled = undefined;
    }
    const { policy: next, changed } = applyModifications(current, mods);
    const expected = opts.initial ?? opts.planned;
    if (changed && fresh && expected) refuseUnplanned(kind, name, expected, current, mods);
    if (!changed) {
      if (!fresh) {
        // The caller's copy says there is nothing to do; confirm against the server.
        current = undefined;
        round--;
        continue;
      }
      emit(round, landed ? "written" : "unchanged");
      return { policy: current, base: current, written: landed, attempts: round, reads, writes };
    }
    const body: Policy = { ...next };
    if (current.etag !== undefined) body.etag = current.etag;
    stopIfAborted("setIamPolicy");
    try {
      writes++;
      const written = await client.setIamPolicy(kind, name, body, { ...call, auditConfigs: editsAuditConfigs(mods) });
      emit(round, "written");
      return { policy: written, base: current, written: true, attempts: round, reads, writes };
    } catch (e) {
      // An answer lost after the request went out (a 5xx, a reset, a timeout): the write may have
      // landed. A read settles it, as after a conflict.
      const lost = isCloudError(e) && e.uncertain;
      if (lost) unsettled = e;
      if (!isCloudError(e, "ABORTED") && !lost) throw e;
      if (isCloudError(e, "ABORTED")) lastAbort = e;
      current = undefined;
      fresh = false;
      const delayMs = round < maxAttempts ? backoffDelay(round, backoff) : undefined;
      emit(round, lost ? "lost" : "aborted", delayMs);
      if (delayMs !== undefined) await waitUnlessAborted(sleep, delayMs, signal);
    }
  }

  throw lastAbort ? gaveUp(name, lastAbort, maxAttempts, started, reads, writes, unsettled !== undefined) : unsettled!;
}

/** The error of a call not sent because the operation was interrupted. */
function stopped(
  call: { kind: PolicyKind; name: string; operation: "getIamPolicy" | "setIamPolicy"; signal: AbortSignal },
  sent: { reads: number; writes: number },
  cause: CloudError | undefined,
  uncertain: boolean,
): CloudError {
  const written = uncertain ? "a write whose answer was lost may have landed" : "nothing was written";
  const what =
    sent.reads + sent.writes === 0
      ? "not sent"
      : `not sent after ${sent.reads} reads and ${sent.writes} writes (${written})`;
  const { kind, name, operation, signal } = call;
  return interruptedError(
    { methodId: policyMethodId(kind, operation), resource: name, operation, signal },
    what,
    cause,
    uncertain,
  );
}

/** One round's event for the client's listeners. */
function roundEvent(
  kind: PolicyKind,
  resource: string,
  round: number,
  maxRounds: number,
  outcome: PolicyRoundEvent["outcome"],
  delayMs?: number,
): PolicyRoundEvent {
  return { type: "policy", kind, resource, round, maxRounds, outcome, ...(delayMs !== undefined ? { delayMs } : {}) };
}

function settings(opts: ModifyOptions) {
  const maxAttempts = opts.maxAttempts ?? MODIFY_DEFAULTS.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new RangeError(`maxAttempts must be an integer ≥ 1, got ${maxAttempts}`);
  const backoff = {
    baseDelayMs: opts.baseDelayMs ?? MODIFY_DEFAULTS.baseDelayMs,
    maxDelayMs: opts.maxDelayMs ?? MODIFY_DEFAULTS.maxDelayMs,
    random: opts.random ?? Math.random,
  };
  return { maxAttempts, backoff, sleep: opts.sleep ?? defaultSleep };
}

/** The error of the read that was to settle a lost write: the write's outcome stays unknown, and
 *  the error says so (the next plan settles it from the write's intent). */
function stillUncertain(e: unknown): unknown {
  return isCloudError(e) && !e.uncertain ? e.withAttempts(e.attempts, e.elapsedMs, e.note, true) : e;
}

/** Changes shown in full in the refusal; the rest are counted. */
const SHOWN_UNPLANNED = 5;

/** Throws when writing `mods` on `current` would do what they do not do on the plan's copy. */
function refuseUnplanned(
  kind: PolicyKind,
  name: string,
  planned: Policy,
  current: Policy,
  mods: readonly PolicyModification[],
): void {
  const extra = unplannedEffects(planned, current, mods);
  if (!extra.length) return;
  const shown = listed(extra, SHOWN_UNPLANNED);
  throw new CloudError({
    status: "FAILED_PRECONDITION",
    httpStatus: 0,
    methodId: policyMethodId(kind, "setIamPolicy"),
    resource: name,
    operation: "setIamPolicy",
    retryable: false,
    serverMessage:
      `another writer changed this policy after the plan was made: writing ` +
      `the plan's changes now would also ${shown}, ` +
      "which is not in the plan. Nothing was written to this policy. Run `converge plan` again and review it.",
  });
}

/** Every write of every round was refused because another writer changed the policy. */
function gaveUp(
  name: string,
  last: CloudError,
  maxAttempts: number,
  started: number,
  reads: number,
  writes: number,
  uncertain: boolean,
): CloudError {
  const elapsedMs = Date.now() - started;
  return new CloudError({
    status: "ABORTED",
    httpStatus: last.httpStatus,
    methodId: last.methodId,
    resource: name,
    operation: "setIamPolicy",
    serverMessage: last.serverMessage,
    attempts: maxAttempts,
    elapsedMs,
    retryable: false,
    details: last.details,
    summary:
      `gave up after ${maxAttempts} read-modify-write attempts over ${(elapsedMs / 1000).toFixed(1)}s ` +
      `(${reads} reads, ${writes} writes): every write was rejected because the policy's etag changed ` +
      `after it was read (concurrent writers); last error`,
    cause: last,
    ...(uncertain ? { uncertain } : {}),
  });
}
