// What the engine needs from the cloud. The CLI adapts src/cloud's client to it; unit tests pass
// fakes made of plain functions.
import type { Federation, Policy } from "../generated/schemas.js";
import type { PolicyModification } from "../iam/policy.js";

export type PolicyKind = "restorePlan" | "endpoint";

export interface ModifyOutcome {
  policy: Policy;
  written: boolean;
  attempts: number;
}

export interface CloudPort {
  /** The live policy, or undefined when the object does not exist (NOT_FOUND). */
  getIamPolicy(kind: PolicyKind, name: string): Promise<Policy | undefined>;
  getFederation(name: string): Promise<Federation>;
  /** One read-modify-write of one policy (etag + retry on ABORTED). */
  modifyPolicy(kind: PolicyKind, name: string, mods: PolicyModification[], initial?: Policy): Promise<ModifyOutcome>;
}

/** The status of an error a CloudPort call threw (a CloudError's, or a fake's), without depending on the client's class. */
export function statusOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "status" in e ? String((e as { status: unknown }).status) : undefined;
}
