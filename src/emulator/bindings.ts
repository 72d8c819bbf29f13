// How Google stores the bindings of an accepted policy, and its size limits. Written from Google's
// reference, independently of the client's merge in src/iam/policy.ts:
// - a binding is identified by its role and its condition (title, description, expression; an
//   absent description is an empty one); bindings with the same identity are one binding, their
//   members united;
// - a member listed twice (in any spelling of the same principal) is listed once, in its first
//   spelling; a binding left without members is dropped;
// - a condition is stored as expression, title and description (when not empty);
// - a policy may refer to at most 1,500 principals, at most 250 of them Google groups; each
//   occurrence counts (the same principal in two bindings counts twice).
import type { Binding, Condition } from "../generated/schemas.js";
import { isGoogleGroup, principalIdentity } from "./principals.js";

export const MAX_PRINCIPALS = 1500;
const MAX_GOOGLE_GROUPS = 250;

function bindingIdentity(role: string, condition: Condition | undefined): string {
  return JSON.stringify(
    condition ? [role, condition.title, condition.description ?? "", condition.expression] : [role],
  );
}

/** The condition as Google stores it. */
function storedCondition(condition: Condition): Condition {
  const stored: Condition = { expression: condition.expression, title: condition.title };
  if (condition.description) stored.description = condition.description;
  return stored;
}

/** The bindings as Google stores them: merged, each principal once, empty ones dropped, in first-seen order. */
export function mergeBindings(bindings: readonly Binding[]): Binding[] {
  const merged = new Map<string, { binding: Binding; seen: Set<string> }>();
  for (const b of bindings) {
    const id = bindingIdentity(b.role, b.condition);
    let entry = merged.get(id);
    if (!entry) {
      const binding: Binding = b.condition
        ? { role: b.role, members: [], condition: storedCondition(b.condition) }
        : { role: b.role, members: [] };
      merged.set(id, (entry = { binding, seen: new Set() }));
    }
    for (const m of b.members) {
      const who = principalIdentity(m);
      if (entry.seen.has(who)) continue;
      entry.seen.add(who);
      entry.binding.members.push(m);
    }
  }
  return [...merged.values()].map((e) => e.binding).filter((b) => b.members.length > 0);
}

export interface PolicySize {
  principals: number;
  googleGroups: number;
}

export function policySize(bindings: readonly Binding[]): PolicySize {
  let principals = 0;
  let googleGroups = 0;
  for (const b of bindings) {
    principals += b.members.length;
    googleGroups += b.members.filter(isGoogleGroup).length;
  }
  return { principals, googleGroups };
}

/** Why stored bindings are over Google's limits; undefined when they are within them. */
export function sizeProblem(size: PolicySize): string | undefined {
  if (size.principals > MAX_PRINCIPALS)
    return (
      `The policy has ${size.principals} principals; an IAM policy may ` +
      `contain at most ${MAX_PRINCIPALS} principals.`
    );
  if (size.googleGroups > MAX_GOOGLE_GROUPS)
    return (
      `The policy has ${size.googleGroups} Google groups; an IAM policy may contain at most ` +
      `${MAX_GOOGLE_GROUPS} Google groups among its principals.`
    );
  return undefined;
}
