// What the engine needs from the cloud. The CLI adapts src/cloud's client to it; unit tests pass
// fakes made of plain functions.
import type { Federation, Policy } from "../generated/schemas.js";
import type { PolicyModification } from "../iam/policy.js";

export type { PolicyKind } from "../gcp/object-kinds.js";
import type { PolicyKind } from "../gcp/object-kinds.js";

export interface ModifyOutcome {
  policy: Policy;
  written: boolean;
  attempts: number;
}

/**
 * Every call takes an optional `signal` (the CLI's Ctrl-C). Once it aborts, a call sends nothing
 * more: not its first request, no retry, no further round of a read-modify-write (a policy read
 * but not yet written stays unwritten), and rejects with an error whose status is INTERRUPTED (below).
 * A request already sent finishes (a read may be abandoned): a write's outcome is always known.
 */
export interface CloudPort {
  /** The live policy, or undefined when the object does not exist (NOT_FOUND). */
  getIamPolicy(kind: PolicyKind, name: string, signal?: AbortSignal): Promise<Policy | undefined>;
  getFederation(name: string, signal?: AbortSignal): Promise<Federation>;
  /** A project's ID and number, asked by either (Resource Manager). A port without it (a test's
   *  fake) leaves project numbers as written. */
  getProject?(project: string, signal?: AbortSignal): Promise<{ projectId: string; number: string }>;
  /** The full names of the objects of `kind` in one location of a project, every page followed
   *  (discovery). A port without it (a test's fake) cannot discover. */
  listObjects?(kind: PolicyKind, project: string, location: string, signal?: AbortSignal): Promise<string[]>;
  /** The location IDs `kind`'s service answers for a project (projects.locations.list). */
  listLocations?(kind: PolicyKind, project: string, signal?: AbortSignal): Promise<string[]>;
  /** One read-modify-write of one policy (etag + retry on ABORTED). */
  /** `planned`: without `initial`, the policy as the plan saw it (see ModifyOptions.planned). */
  modifyPolicy(
    kind: PolicyKind,
    name: string,
    mods: PolicyModification[],
    initial?: Policy,
    signal?: AbortSignal,
    planned?: Policy,
  ): Promise<ModifyOutcome>;
  /**
   * The read of this policy that was started ahead of planning (./prefetch.ts), handed over once:
   * the caller then owns its outcome (an error is reported by whoever takes it, or by nobody).
   * Undefined when none was started; a port without a prefetch leaves it out.
   */
  takeStarted?(kind: PolicyKind, name: string): StartedRead | undefined;
}

/** A policy to read: its object's kind and full name. */
export interface PolicyRef {
  kind: PolicyKind;
  name: string;
}

/** A policy read under way (see CloudPort.takeStarted). */
export interface StartedRead {
  /** Resolves when the read's turn under the parallelism came: it is being sent. */
  sent: Promise<void>;
  /** What getIamPolicy would have returned. */
  policy: Promise<Policy | undefined>;
}

/** The status of a call the signal stopped before it was sent: it changed nothing. */
export const INTERRUPTED = "CANCELLED";

/**
 * The status of an error a CloudPort call threw (a CloudError's, or a fake's), without depending on the client's class.
 */
export function statusOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "status" in e ? String((e as { status: unknown }).status) : undefined;
}
