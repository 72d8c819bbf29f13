// `drift`: is reality still what was approved? Read-only, for every front end: the stack is planned
// with a refresh (one read per policy, no lock, nothing written to the state or the cloud), and each
// difference between the live policies and the state is classified (src/plan/drift.ts). What the
// findings hold is scrubbed of the stack's secrets, as a plan's values are.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Plan } from "../generated/schemas.js";
import { accessDelta, plannedPolicies } from "../plan/access.js";
import { classifyDrift, type DriftFinding, grantKey } from "../plan/drift.js";
import { scrub } from "../config/redact.js";
import { claimsOfValue, type ResourceClaim } from "../claims/claims.js";
import { pushAll } from "../base/arrays.js";
import { noEmit } from "../contracts/events.js";
import type { Controls, Hooks, Stopped } from "./operations.js";
import { type PlannedStack, type PlanRequest, planStack, type StackSession } from "./session.js";

export type DriftRequest = Omit<PlanRequest, "refresh" | "destroy" | "targets" | "replace">;

export interface DriftReport {
  /** Every difference found, object by object (none when the check failed). */
  findings: DriftFinding[];
  /** The check's diagnostics (the stack's warnings, a policy that could not be read). */
  diagnostics: Diagnostic[];
  /** The check failed: its findings are not known. */
  errored: boolean;
  /** How many policies were read. */
  policies: number;
  /** The plan the check made (secrets redacted): what `--remediate` would restore. */
  plan: Plan;
}

/** The claims the stack's resources hold once applied (not those it deletes). */
function stackClaimsOf(plan: Plan): ResourceClaim[] {
  const out: ResourceClaim[] = [];
  for (const rc of plan.resource_changes) {
    if (rc.mode !== "managed" || rc.change.action === "delete" || rc.change.action === "replace") continue;
    pushAll(out, claimsOfValue(rc.type, rc.address, rc.change.after));
  }
  return out;
}

/** The grants the stack's plan revokes, by object. */
function revokesOf(planned: PlannedStack): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const delta = accessDelta(plannedPolicies(planned.real.resource_changes, planned.live, true));
  for (const c of delta.changes) {
    if (c.action !== "revoke") continue;
    let keys = out.get(c.object);
    if (!keys) out.set(c.object, (keys = new Set()));
    keys.add(grantKey(c.role, c.condition, c.principal));
  }
  return out;
}

/** The drift of a planned stack. */
function driftOf(planned: PlannedStack): DriftReport {
  const base = { diagnostics: planned.diagnostics, policies: planned.live.size, plan: planned.plan };
  if (planned.plan.errored) return { ...base, findings: [], errored: true };
  const findings = classifyDrift({
    state: planned.prior,
    stackClaims: stackClaimsOf(planned.real),
    live: planned.live,
    revokes: revokesOf(planned),
  });
  return { ...base, findings: scrub(findings, planned.secrets), errored: false };
}

/** `drift`: plans with a refresh (no lock, no write) and classifies what changed out of band. */
export async function checkDrift(
  session: StackSession,
  request: DriftRequest,
  hooks: Pick<Hooks, "emit"> = {},
  controls: Pick<Controls, "planning"> = {},
): Promise<{ report: DriftReport; stopped: Stopped }> {
  const full: PlanRequest = { ...request, refresh: true, destroy: false, targets: [], replace: [] };
  const run = (signal: AbortSignal | undefined) => planStack(session, full, hooks.emit ?? noEmit, signal);
  const { value: planned, stopped } = controls.planning
    ? await controls.planning(run)
    : { value: await run(undefined), stopped: false as const };
  try {
    return { report: driftOf(planned), stopped };
  } finally {
    await planned.close();
  }
}

/** The addresses a remediation plan targets: the state's resources whose grants drifted and that
 *  an apply restores (an unmanaged grant has none: `--adopt` is for those; a deleted principal is
 *  left to a person). */
export function remediatedAddresses(findings: readonly DriftFinding[]): string[] {
  const out = new Set<string>();
  for (const f of findings) {
    // A deleted principal is not granted again: its email may name another account by now.
    if (f.class === "unmanaged" || f.class === "deleted-principal" || !f.address) continue;
    if (f.class === "added" && !f.revokedByNextApply) continue;
    out.add(f.address);
  }
  return [...out].sort();
}
