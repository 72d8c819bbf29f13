// Drift: how the live policies differ from what the state says converge approved, each difference
// classified. A pure function of the state, the stack's claims and the policies read (one read per
// policy, made by the plan's refresh): `converge drift` (src/engine/drift.ts) reports what it returns.
// Grants are compared by role, condition and member (members by memberKey); an etag or a policy
// version that changed alone is not drift.
import type { Condition, Policy, State } from "../generated/schemas.js";
import type { Claim } from "../drivers/types.js";
import { resourceDriver } from "../drivers/registry.js";
import { inputsOf } from "../drivers/inputs.js";
import { canonicalCondition, conditionKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";
import type { ResourceClaim } from "../claims/claims.js";

/**
 * (a) `removed`: a grant converge owns was removed (or its whole object is gone);
 * (b) `added`: a member was added to a role or policy converge manages authoritatively;
 * (c) `unmanaged`: a grant on an object converge manages in part, that no resource owns;
 * (d) `deleted-principal`: a member converge granted (or any member on a managed object) is now a
 *     `deleted:` principal;
 * (e) `condition`: a grant converge owns is there with another condition.
 */
export type DriftClass = "removed" | "added" | "unmanaged" | "deleted-principal" | "condition";

/** The letter of each class, for people who read the report beside the docs. */
export const DRIFT_LETTER: Readonly<Record<DriftClass, string>> = {
  removed: "a",
  added: "b",
  unmanaged: "c",
  "deleted-principal": "d",
  condition: "e",
};

export interface DriftFinding {
  class: DriftClass;
  /** The object's full name and the kind of its policy. */
  object: string;
  kind: string;
  role: string;
  member: string;
  /** The grant's condition: as approved (removed, deleted-principal), as found live (the others). */
  condition?: Condition;
  /** `condition`: the condition converge approved; `deleted-principal`: the live member. */
  was?: Condition;
  live?: string;
  /** The state's resource that owns the grant (removed, deleted-principal, condition) or manages the role
   *  authoritatively (added: the next apply revokes it). */
  address?: string;
  /** `added`: the next apply of the stack revokes it (the stack still manages the role). */
  revokedByNextApply?: boolean;
  /** `removed`: the object itself is gone. */
  objectGone?: boolean;
}

export interface DriftInput {
  state: State | undefined;
  /** The claims of the stack's resources as planned. */
  stackClaims: readonly ResourceClaim[];
  /** The policies read, keyed "{kind} {name}". */
  live: ReadonlyMap<string, Policy>;
  /** The grants the stack's plan revokes, by object (keys of `grantKey`). */
  revokes: ReadonlyMap<string, Revokes>;
}

/** The keys (`grantKey`) of the grants a plan revokes on one object. */
export type Revokes = ReadonlySet<string>;
const NONE: Revokes = new Set();
type Base = { object: string; kind: string };

interface Grant {
  role: string;
  condition?: Condition;
  member: string;
}

export const grantKey = (role: string, condition: Condition | undefined, member: string) =>
  JSON.stringify([role, conditionKey(condition), memberKey(member)]);

/** The member a `deleted:` member was: `deleted:user:a@x?uid=1` → `user:a@x`; undefined otherwise. */
export function undeleted(member: string): string | undefined {
  if (!member.startsWith("deleted:")) return undefined;
  const rest = member.slice("deleted:".length);
  if (rest.startsWith("principal")) return rest;
  const q = rest.indexOf("?uid=");
  return q < 0 ? rest : rest.slice(0, q);
}

/** Every grant of `policy`. */
function liveGrants(policy: Policy): Grant[] {
  const out: Grant[] = [];
  for (const b of policy.bindings ?? []) {
    const condition = canonicalCondition(b.condition);
    for (const member of b.members) out.push({ role: b.role, member, ...(condition ? { condition } : {}) });
  }
  return out;
}

/** What the state owns on one object: its grants (with the owning address) and its authoritative claims. */
interface Owned {
  kind: string;
  grants: Map<string, Grant & { address: string }>;
  /** Authoritative claims: a whole policy (key "") or a binding (key bindingKey). */
  authoritative: Map<string, string>;
}

const bindingOf = (role: string, condition: Condition | undefined) => JSON.stringify([role, conditionKey(condition)]);

/** The grants each state resource holds, and the authoritative claims, by object. */
function ownedByObject(state: State | undefined): Map<string, Owned> {
  const out = new Map<string, Owned>();
  for (const r of state?.resources ?? []) {
    const d = resourceDriver(r.type);
    if (!d) continue;
    const inputs = inputsOf(d, r.inputs);
    const object = d.policyName(inputs);
    let o = out.get(object);
    if (!o) out.set(object, (o = { kind: d.kind, grants: new Map(), authoritative: new Map() }));
    for (const claim of d.claims(inputs)) {
      if (claim.scope === "policy") o.authoritative.set("", r.address);
      else if (claim.scope === "binding") o.authoritative.set(bindingOf(claim.role, claim.condition), r.address);
    }
    const bindings =
      inputs.bindings ?? (inputs.role ? [{ role: inputs.role, members: [], condition: inputs.condition }] : []);
    for (const b of bindings) {
      const condition = canonicalCondition(b.condition);
      const members = inputs.bindings ? b.members : (inputs.members ?? (inputs.member ? [inputs.member] : []));
      for (const member of members) {
        const g = { role: b.role, member, address: r.address, ...(condition ? { condition } : {}) };
        o.grants.set(grantKey(b.role, condition, member), g);
      }
    }
  }
  return out;
}

/** Whether one of the stack's `claims` holds the grant (the stack declares it, or manages its role). */
function stackCovers(claims: readonly Claim[], g: Grant): boolean {
  return claims.some((c) => {
    if (c.scope === "policy") return true;
    if (c.role !== g.role || conditionKey(c.condition) !== conditionKey(g.condition)) return false;
    return c.scope === "binding" || memberKey(c.member) === memberKey(g.member);
  });
}

/** The authoritative address of the state that manages `g`'s role on the object, if any. */
function authorityOf(owned: Owned, g: Grant): string | undefined {
  return owned.authoritative.get("") ?? owned.authoritative.get(bindingOf(g.role, g.condition));
}

/** The differences on one object whose policy was read. */
function objectDrift(
  object: string,
  owned: Owned,
  policy: Policy,
  stack: readonly Claim[],
  revokes: Revokes,
): DriftFinding[] {
  const out: DriftFinding[] = [];
  const live = liveGrants(policy);
  const liveKeys = new Set(live.map((g) => grantKey(g.role, g.condition, g.member)));
  const used = new Set<Grant>();
  const base = { object, kind: owned.kind };
  for (const [key, g] of owned.grants) {
    if (liveKeys.has(key)) continue;
    const gone = live.find(
      (l) =>
        !used.has(l) &&
        l.role === g.role &&
        conditionKey(l.condition) === conditionKey(g.condition) &&
        undeleted(l.member) !== undefined &&
        memberKey(undeleted(l.member)!) === memberKey(g.member),
    );
    const moved = gone
      ? undefined
      : live.find(
          (l) =>
            !used.has(l) &&
            l.role === g.role &&
            memberKey(l.member) === memberKey(g.member) &&
            !owned.grants.has(grantKey(l.role, l.condition, l.member)),
        );
    const cond = g.condition ? { condition: g.condition } : {};
    if (gone) {
      used.add(gone);
      out.push({
        class: "deleted-principal",
        ...base,
        role: g.role,
        member: g.member,
        ...cond,
        live: gone.member,
        address: g.address,
      });
    } else if (moved) {
      used.add(moved);
      const now = moved.condition ? { condition: moved.condition } : {};
      out.push({
        class: "condition",
        ...base,
        role: g.role,
        member: g.member,
        ...now,
        ...(g.condition ? { was: g.condition } : {}),
        address: g.address,
      });
    } else out.push({ class: "removed", ...base, role: g.role, member: g.member, ...cond, address: g.address });
  }
  for (const l of live) {
    if (used.has(l) || owned.grants.has(grantKey(l.role, l.condition, l.member))) continue;
    const f = unownedFinding(base, owned, l, stack, revokes);
    if (f) out.push(f);
  }
  return out;
}

/** A live grant no state resource holds: a member added to a role converge manages, a deleted principal,
 *  or an unmanaged grant. */
function unownedFinding(
  base: Base,
  owned: Owned,
  l: Grant,
  stack: readonly Claim[],
  revokes: Revokes,
): DriftFinding | undefined {
  const cond = l.condition ? { condition: l.condition } : {};
  const authority = authorityOf(owned, l);
  if (l.member.startsWith("deleted:")) {
    return {
      class: "deleted-principal",
      ...base,
      role: l.role,
      member: l.member,
      ...cond,
      ...(authority ? { address: authority } : {}),
    };
  }
  if (authority) {
    const revoked = revokes.has(grantKey(l.role, l.condition, l.member));
    return {
      class: "added",
      ...base,
      role: l.role,
      member: l.member,
      ...cond,
      address: authority,
      revokedByNextApply: revoked,
    };
  }
  // A grant the stack declares and its next apply adopts is a change under review, not drift.
  if (stackCovers(stack, l)) return undefined;
  return { class: "unmanaged", ...base, role: l.role, member: l.member, ...cond };
}

/** Every difference between the live policies and what the state approved, object by object in
 *  name order. Call it only when every policy could be read: an object whose policy `live` does
 *  not hold is gone, and each of its grants removed. */
export function classifyDrift(input: DriftInput): DriftFinding[] {
  const owned = ownedByObject(input.state);
  const stackByObject = new Map<string, Claim[]>();
  for (const c of input.stackClaims) {
    const claims = stackByObject.get(c.claim.object);
    if (claims) claims.push(c.claim);
    else stackByObject.set(c.claim.object, [c.claim]);
  }
  const out: DriftFinding[] = [];
  for (const object of [...owned.keys()].sort()) {
    const o = owned.get(object)!;
    const policy = input.live.get(`${o.kind} ${object}`);
    if (policy) {
      for (const f of objectDrift(
        object,
        o,
        policy,
        stackByObject.get(object) ?? [],
        input.revokes.get(object) ?? NONE,
      ))
        out.push(f);
      continue;
    }
    for (const g of o.grants.values()) {
      const cond = g.condition ? { condition: g.condition } : {};
      out.push({
        class: "removed",
        object,
        kind: o.kind,
        role: g.role,
        member: g.member,
        ...cond,
        address: g.address,
        objectGone: true,
      });
    }
  }
  return out;
}

/** A finding's identity: the same drift (same class, grant and live form) has the same key. */
export function findingKey(f: DriftFinding): string {
  return JSON.stringify([
    f.class,
    f.object,
    f.role,
    conditionKey(f.condition),
    memberKey(f.member),
    f.live ?? "",
    conditionKey(f.was),
  ]);
}
