// Cross-stack ownership (issue 17): on a backend that sees every stack, a plan whose resources
// claim what another stack (or another workspace of this one) manages is an error naming that
// stack, workspace and resource, before anything is written. Two stacks managing one grant undo
// each other's changes at every apply (pulumi #13799); the one rule of what conflicts is the
// drivers' (src/drivers/claims.ts).
import { error, UserError } from "../diagnostics/diagnostic.js";
import type { Plan } from "../generated/schemas.js";
import { claimsOfValue, describeClaim, type ClaimConflict, type ResourceClaim } from "../state/claims.js";
import type { StateStore } from "../state/index.js";

/** The claims of the plan's resources that exist once it is applied (values known at plan time). */
export function planClaims(plan: Plan): ResourceClaim[] {
  const out: ResourceClaim[] = [];
  for (const c of plan.resource_changes) {
    const a = c.change.actions;
    if (c.mode !== "managed" || c.config || !c.change.after || (a.length === 1 && a[0] === "delete")) continue;
    out.push(...claimsOfValue(c.type, c.address, c.change.after));
  }
  return out;
}

function conflictError(c: ClaimConflict, where: string) {
  const o = c.owner;
  return error(`resource "${c.mine.address}" claims ${describeClaim(c.mine.claim)}, which stack "${o.stack}" workspace "${o.workspace}" manages (resource "${o.address}": ${describeClaim(o.claim)})`, {
    code: "state/claim-conflict",
    address: c.mine.address,
    file: where,
    detail: `Two stacks that manage the same grant undo each other's changes at every apply. Manage it in one stack only: remove it from this stack, or from stack "${o.stack}" (workspace "${o.workspace}") and apply there first. \`converge state claims\` lists what each stack manages. Nothing was written.`,
  });
}

/** Throws a `state/claim-conflict` error for each claim of `plan` another stack or workspace holds. */
export function checkClaims(store: StateStore, plan: Plan): Promise<void> {
  // A backend without claims (a local file) has nothing to compare them with.
  if (!store.claimConflicts) return Promise.resolve();
  return checkResourceClaims(store, planClaims(plan));
}

/** Throws a `state/claim-conflict` error for each of `claims` another stack or workspace holds
 *  (a plan's, or an import's before it records the grant). */
export async function checkResourceClaims(store: StateStore, claims: ResourceClaim[]): Promise<void> {
  if (!store.claimConflicts) return;
  const conflicts = await store.claimConflicts(claims);
  if (conflicts.length) throw new UserError(conflicts.map((c) => conflictError(c, store.describe())));
}
