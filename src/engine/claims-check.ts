// Cross-stack ownership (issue 17): on a backend that sees every stack, a plan whose resources
// claim what another stack (or another workspace of this one) manages is an error naming that
// stack, workspace and resource, before anything is written. Two stacks managing one grant undo
// each other's changes at every apply (pulumi #13799); the one rule of what conflicts is the
// drivers' (src/drivers/claims.ts).
import type { Plan } from "../generated/schemas.js";
import { claimConflictError, claimsOfValue, type ResourceClaim } from "../state/claims.js";
import type { StateStore } from "../state/index.js";
import type { ProjectIds } from "../cloud/names.js";
import { pushAll } from "../base/arrays.js";

/** The claims of the plan's resources that exist once it is applied (values known at plan time). */
export function planClaims(plan: Plan): ResourceClaim[] {
  const out: ResourceClaim[] = [];
  for (const c of plan.resource_changes) {
    if (c.mode !== "managed" || c.config || !c.change.after || c.change.action === "delete") continue;
    pushAll(out, claimsOfValue(c.type, c.address, c.change.after, c.change.after_sensitive));
  }
  return out;
}

/** Throws a `state/claim-conflict` error for each claim of `plan` another stack or workspace holds. */
export function checkClaims(store: StateStore, plan: Plan, projectIds?: ProjectIds): Promise<void> {
  // A backend without claims (a local file) has nothing to compare them with.
  if (!store.claimConflicts) return Promise.resolve();
  return checkResourceClaims(store, planClaims(plan), projectIds);
}

/** Throws a `state/claim-conflict` error for each of `claims` another stack or workspace holds
 *  (a plan's, or an import's before it records the grant). */
export async function checkResourceClaims(store: StateStore, claims: ResourceClaim[], projectIds?: ProjectIds): Promise<void> {
  if (!store.claimConflicts) return;
  const conflicts = await store.claimConflicts(claims, projectIds);
  if (conflicts.length) throw claimConflictError(conflicts, store.describe());
}

/**
 * Before an apply's first write, under the state lock: records what the plan will claim, or throws
 * the `state/claim-conflict` error of each grant another stack or workspace claims or is applying.
 * On a backend that reserves (PostgreSQL) the check and the record are one transaction, so two
 * applies that both passed their plan's check cannot both take a grant.
 */
export function reservePlanClaims(store: StateStore, plan: Plan, projectIds?: ProjectIds): Promise<void> {
  return reserveResourceClaims(store, planClaims(plan), projectIds);
}

/** reservePlanClaims for `claims` (also those of a resource known only during apply, before its write). */
export async function reserveResourceClaims(store: StateStore, claims: ResourceClaim[], projectIds?: ProjectIds): Promise<void> {
  if (!store.reserveClaims) return checkResourceClaims(store, claims, projectIds);
  const conflicts = await store.reserveClaims(claims, projectIds);
  if (conflicts.length) throw claimConflictError(conflicts, store.describe());
}
