// What the cloud client reports as it works: one event per HTTP attempt of a call (./transport.ts)
// and one per read-modify-write round of a policy (./policy-engine.ts).
import type { PolicyKind } from "../gcp/object-kinds.js";

/** One HTTP attempt of one call. `status` is "OK" or the canonical error code. */
export interface AttemptEvent {
  type: "attempt";
  methodId: string;
  resource: string;
  /** 1 for the first try. */
  attempt: number;
  /** The most attempts this call will make. */
  maxAttempts: number;
  status: string;
  /** HTTP status, 0 when no response was received. */
  httpStatus: number;
  /** Duration of this attempt. */
  ms: number;
  /** True when the transport will try again. */
  retry: boolean;
  /** The wait before the next attempt, when retrying. */
  delayMs?: number;
}

/** One read-modify-write round of the policy engine. */
export interface PolicyRoundEvent {
  type: "policy";
  kind: PolicyKind;
  resource: string;
  /** 1 for the first round. */
  round: number;
  /** The most rounds this modification will make. */
  maxRounds: number;
  /** written: set succeeded (or, after a lost answer, the read found its edits there); unchanged:
   *  nothing to write; aborted: etag conflict (409); lost: the write's answer was lost after it
   *  was sent (a 5xx, a reset), it may have landed. After aborted and lost, the next round reads
   *  again, unless it was the last one. */
  outcome: "written" | "unchanged" | "aborted" | "lost";
  /** Wait before the next round (aborted only, when retrying). */
  delayMs?: number;
}

export type CloudEvent = AttemptEvent | PolicyRoundEvent;
