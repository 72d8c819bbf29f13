// Cross-stack ownership (issue 17): on a backend that sees every stack, a plan whose resources
// claim what another stack (or another workspace of this one) manages is an error naming that
// stack, workspace and resource, before anything is written. Two stacks managing one grant undo
// each other's changes at every apply (pulumi #13799); the one rule of what conflicts is the
// claims room's (src/claims/).
import type { Plan } from "../generated/schemas.js";
import { claimConflictError, planClaims, type ResourceClaim } from "../claims/claims.js";
import type { StateStore } from "../state/index.js";
import type { ProjectIds } from "../cloud/names.js";

/** Throws a `state/claim-conflict` error for each claim of `plan` another stack or workspace holds. */
export function checkClaims(store: StateStore, plan: Plan, projectIds?: ProjectIds): Promise<void> {
  // A backend without claims (a local file) has nothing to compare them with.
  if (!store.claims) return Promise.resolve();
  return checkResourceClaims(store, planClaims(plan), projectIds);
}

/** Throws a `state/claim-conflict` error for each of `claims` another stack or workspace holds
 *  (a plan's, or an import's before it records the grant). */
export async function checkResourceClaims(
  store: StateStore,
  claims: ResourceClaim[],
  projectIds?: ProjectIds,
): Promise<void> {
  if (!store.claims) return;
  const conflicts = await store.claims.conflicts(claims, projectIds);
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
export async function reserveResourceClaims(
  store: StateStore,
  claims: ResourceClaim[],
  projectIds?: ProjectIds,
): Promise<void> {
  if (!store.claims) return;
  const conflicts = await store.claims.reserve(claims, projectIds);
  if (conflicts.length) throw claimConflictError(conflicts, store.describe());
}
