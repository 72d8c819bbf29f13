// Google's limit of 1,500 principals in one allow policy, checked before anything is written:
// on the stack alone when it loads (the principals it lists for one object), and at plan time on
// the policy each object would hold (src/plan/policy-size.ts).
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import type { Condition } from "../generated/schemas.js";
import { conditionKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";
import { hasInterpolation } from "../language/expressions.js";
import type { ResourceDecl, StackModel } from "./model.js";
import { formatPath } from "../yaml/source.js";
import { completeNameOnce } from "../cloud/names.js";

/** Google's limit on principal entries in one allow policy. */
export const MAX_PRINCIPALS = 1500;

/** MAX_PRINCIPALS written with thousands separators ("1,500"), by hand: `toLocaleString("en-US")`
 *  loads the ICU locale data when the module loads, about 25 ms of every command's start. */
export const MAX_TEXT = String(MAX_PRINCIPALS).replace(/\B(?=(\d{3})+$)/g, ",");
export const LIMIT = `Google refuses an allow policy with more than ${MAX_TEXT} principals`;
const literal = (v: unknown): v is string => typeof v === "string" && !hasInterpolation(v);

/** The object a resource's literal `name` designates, in full; undefined when it is interpolated
 *  or malformed. completeNameOnce remembers the answers (a policy's resources share its name: one
 *  completion per object, not per resource). */
function objectOf(stack: StackModel, r: ResourceDecl): string | undefined {
  const name = r.properties.name;
  if (!literal(name)) return undefined;
  // What the drivers' normalize makes of the name (the rest of a resource's inputs cannot change it).
  const named = completeNameOnce(r.driver.kind, name, {
    project: stack.provider.project,
    location: stack.provider.location,
  });
  return typeof named === "string" ? undefined : named.full;
}

/** The distinct (role, condition, member) grants on one object: the member keys by binding (role
 *  and condition), and how many there are in all. */
interface ObjectGrants {
  byBinding: Map<string, Set<string>>;
  size: number;
  /** The resource that took the count over the limit */
  over?: string;
}

/** Adds to `grants` the (role, condition, member) grants of `b` (a binding, member or binding
 *  resource's properties) that it lists literally. */
function addGrants(grants: ObjectGrants, b: Record<string, unknown>): void {
  let members: Set<string> | undefined;
  const add = (m: unknown) => {
    if (!literal(m)) return;
    if (!members) {
      const binding = JSON.stringify([
        b.role,
        b.condition && typeof b.condition === "object" ? conditionKey(b.condition as Condition) : (b.condition ?? ""),
      ]);
      members = grants.byBinding.get(binding);
      if (!members) grants.byBinding.set(binding, (members = new Set()));
    }
    const before = members.size;
    members.add(memberKey(m));
    grants.size += members.size - before;
  };
  if (Array.isArray(b.members)) for (const m of b.members) add(m);
  add(b.member);
}

/** Adds the grants a resource lists literally: its own, or each of its bindings'. */
function addLiteralGrants(grants: ObjectGrants, p: Record<string, unknown>): void {
  if (!Array.isArray(p.bindings)) return addGrants(grants, p);
  for (const b of p.bindings) if (typeof b === "object" && b !== null) addGrants(grants, b as Record<string, unknown>);
}

/** How many grants a binding (or binding or member resource) lists at most: its members and member. */
function bindingBound(b: Record<string, unknown>): number {
  return (Array.isArray(b.members) ? b.members.length : 0) + (b.member !== undefined ? 1 : 0);
}

/** The objects whose resources list more than 1,500 members and member in all: the only ones
 *  whose distinct literal grants can be over the limit (the rest need no set of member keys). */
function grantBounds(stack: StackModel): Set<string> {
  const bound = new Map<string, number>();
  const over = new Set<string>();
  for (const r of stack.resources.values()) {
    const object = objectOf(stack, r);
    if (!object) continue;
    const p = r.properties;
    let n = 0;
    if (!Array.isArray(p.bindings)) n = bindingBound(p);
    else
      for (const b of p.bindings)
        if (typeof b === "object" && b !== null) n += bindingBound(b as Record<string, unknown>);
    const total = (bound.get(object) ?? 0) + n;
    bound.set(object, total);
    if (total > MAX_PRINCIPALS) over.add(object);
  }
  return over;
}

/**
 * Objects the stack alone grants more than 1,500 principals on (literal members only, each
 * (role, condition, member) once): one error per object, at the resource that goes over.
 */
export function stackPolicySizeErrors(stack: StackModel): Diagnostic[] {
  const bounds = grantBounds(stack);
  const perObject = new Map<string, ObjectGrants>();
  if (bounds.size === 0) return [];
  for (const r of stack.resources.values()) {
    const object = objectOf(stack, r);
    if (!object || !bounds.has(object)) continue;
    let entry = perObject.get(object);
    if (!entry) perObject.set(object, (entry = { byBinding: new Map(), size: 0 }));
    addLiteralGrants(entry, r.properties);
    if (entry.size > MAX_PRINCIPALS && entry.over === undefined) entry.over = r.name;
  }
  const out: Diagnostic[] = [];
  for (const [object, { size, over }] of perObject) {
    if (over === undefined) continue;
    const props = stack.resources.get(over)!.properties;
    const at = [
      "resources",
      stack.resources.get(over)!.decl,
      "properties",
      Array.isArray(props.bindings) ? "bindings" : Array.isArray(props.members) ? "members" : "member",
    ];
    out.push(
      error(`${over}: the stack grants ${size} principals on ${object}, more than one policy may hold`, {
        file: stack.source.file,
        ...stack.source.position(at),
        path: formatPath(at),
        address: over,
        detail: `${LIMIT}; split the grants (for example with groups).`,
      }),
    );
  }
  return out;
}
