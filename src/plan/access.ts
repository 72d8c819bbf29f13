// The access delta: who gains or loses which role on which object, computed from the effective
// policy before (live) and after (the planned modifications applied to it). It includes members a
// binding removes, which a resource-level diff does not show.
import type { AccessChange, AccessDelta, AuditChange, ConditionChange } from "../generated/schemas.js";
import type { GuardrailPolicy, Policy, ResourceChange } from "../generated/schemas.js";
import { auditChanges } from "./audit-changes.js";
import { resourceDriver } from "../drivers/registry.js";
import { inputsOf } from "../drivers/inputs.js";
import { HeldGrants } from "./ownership.js";
import { applyModifications, type PolicyModification } from "../iam/policy.js";
import { bindingKey, conditionKey } from "../iam/conditions.js";
import { type Grant, grantKey, grantsOf as grants } from "../iam/policy-effect.js";
import { memberKey } from "../iam/members.js";
import type { PolicyKind } from "../gcp/object-kinds.js";
import type { IamDriver, IamInputs } from "../drivers/types.js";
import { pushAll } from "../base/arrays.js";

/** One policy as this plan leaves it: the live policy before, with the plan's modifications applied after. */
export interface PlannedPolicy {
  kind: PolicyKind;
  name: string;
  before: Policy;
  after: Policy;
  /** The addresses of the binding and policy resources, which change a whole binding, by
   *  bindingKey (EVERY_BINDING: a policy resource, which changes all of them). */
  byBinding: Map<string, Set<string>>;
  /** The addresses of the member resources, which change one member of a binding, by
   *  grantKey: a member resource causes only its own member's grant or revocation. */
  byMember: Map<string, Set<string>>;
}

/** The key of one member of one binding (as `grants` keys them). */

/** The byBinding key of a policy resource: it changes every binding of its object. */
export const EVERY_BINDING = "*";

/**
 * The modifications the managed changes make, grouped by policy; policies whose edits are not known yet are
 * `incomplete`.
 */
function plannedEdits(changes: readonly ResourceChange[]) {
  const perPolicy = new Map<
    string,
    {
      kind: PolicyKind;
      name: string;
      mods: PolicyModification[];
      byBinding: Map<string, Set<string>>;
      byMember: Map<string, Set<string>>;
    }
  >();
  const incomplete = new Set<string>();
  // What the plan's resources hold, worked out at the first revoke: only a revoke is guarded (a
  // no-op plan makes no edit, a cold apply only grants).
  let held: HeldGrants | undefined;
  for (const c of changes) {
    if (c.mode !== "managed") continue;
    const d = resourceDriver(c.type);
    if (!d) continue;
    const a = c.change.action;
    if (a === "no-op") continue;
    if (c.config && a !== "delete") {
      if (c.policy) incomplete.add(c.policy);
      continue;
    }
    const prior = c.change.before ? inputsOf(d, c.change.before) : undefined;
    const desired = c.change.after ? inputsOf(d, c.change.after) : undefined;
    for (const [planned, revoke] of editsOf(d, a === "create" && !c.change.importing ? undefined : prior, desired)) {
      // An adopted grant predates converge: revoking the resource leaves it in place.
      if (revoke && (c.before_adopted || (c.retain_on_delete && a === "delete"))) continue;
      const object = (revoke ? prior : desired)!.name;
      const m = isRevoke(planned) ? (held ??= HeldGrants.of(changes)).guard(d.kind, object, [planned])[0] : planned;
      if (!m) continue;
      const key = `${d.kind} ${object}`;
      let entry = perPolicy.get(key);
      if (!entry) {
        entry = {
          kind: d.kind,
          name: key.slice(key.indexOf(" ") + 1),
          mods: [],
          byBinding: new Map(),
          byMember: new Map(),
        };
        perPolicy.set(key, entry);
      }
      entry.mods.push(m);
      attribute(entry, m, c.address);
    }
  }
  return { perPolicy, incomplete };
}

/** Records `address` as a cause of what `m` changes: a whole-policy edit every binding of the
 *  object, a binding edit its binding, a member edit that member of its binding only. */
function attribute(
  entry: { byBinding: Map<string, Set<string>>; byMember: Map<string, Set<string>> },
  m: PolicyModification,
  address: string,
): void {
  const [map, key] =
    m.kind === "setPolicy"
      ? [entry.byBinding, EVERY_BINDING]
      : m.kind === "addMember" || m.kind === "removeMember"
        ? [entry.byMember, grantKey(bindingKey(m.role, m.condition), m.member)]
        : [entry.byBinding, bindingKey(m.role, m.condition)];
  const owners = map.get(key);
  if (owners) owners.add(address);
  else map.set(key, new Set([address]));
}

/** The modifications HeldGrants.guard may drop or narrow; it passes every other one unchanged. */
function isRevoke(m: PolicyModification): boolean {
  return m.kind === "removeBinding" || m.kind === "removeMember";
}

/** A change's modifications, each with whether it revokes (it lands on the prior object). A change
 *  that moves to another object is two halves, as apply writes it: the prior object's revoke (a
 *  whole-policy type's is its empty policy) and the desired object's grant. */
function editsOf(
  d: IamDriver,
  prior: IamInputs | undefined,
  desired: IamInputs | undefined,
): [PolicyModification, boolean][] {
  if (prior && desired && prior.name !== desired.name) {
    return [
      ...d.modifications(prior, undefined).map((m): [PolicyModification, boolean] => [m, true]),
      ...d.modifications(undefined, desired).map((m): [PolicyModification, boolean] => [m, false]),
    ];
  }
  return d
    .modifications(prior, desired)
    .map((m) => [m, m.kind === "removeBinding" || m.kind === "removeMember" || (m.kind === "setPolicy" && !desired)]);
}

/**
 * Every policy the plan changes, before and after. A policy that was not read (no refresh) is
 * left out and listed in `incomplete`, with those whose changes depend on unknown values.
 */
export function plannedPolicies(
  changes: readonly ResourceChange[],
  live: ReadonlyMap<string, Policy>,
  refreshed: boolean,
): { policies: PlannedPolicy[]; incomplete: string[] } {
  const { perPolicy, incomplete } = plannedEdits(changes);
  const policies: PlannedPolicy[] = [];
  for (const [key, entry] of perPolicy) {
    const before = live.get(key);
    if (!before && refreshed === false) {
      incomplete.add(entry.name);
      continue;
    }
    const base: Policy = before ?? { bindings: [] };
    policies.push({
      kind: entry.kind,
      name: entry.name,
      before: base,
      after: applyModifications(base, entry.mods).policy,
      byBinding: entry.byBinding,
      byMember: entry.byMember,
    });
  }
  return { policies, incomplete: [...incomplete].sort() };
}

/** Every policy the plan read as the plan leaves it (the planned policy where the plan changes it,
 *  else the live one), by kind and name: the stack's end state, as guardrail rules see it. */
export function endPolicies(planned: readonly PlannedPolicy[], live: ReadonlyMap<string, Policy>): GuardrailPolicy[] {
  const out = new Map<string, GuardrailPolicy>();
  for (const [key, p] of live) {
    const space = key.indexOf(" ");
    out.set(key, { kind: key.slice(0, space) as PolicyKind, name: key.slice(space + 1), bindings: p.bindings ?? [] });
  }
  for (const p of planned) {
    out.set(`${p.kind} ${p.name}`, { kind: p.kind, name: p.name, bindings: p.after.bindings ?? [] });
  }
  return [...out.keys()].sort().map((k) => out.get(k)!);
}

/** Who gains or loses which role on which object, from `plannedPolicies`. */
export function accessDelta({
  policies,
  incomplete,
}: {
  policies: readonly PlannedPolicy[];
  incomplete: string[];
}): AccessDelta {
  const out: AccessChange[] = [];
  const audit: AuditChange[] = [];
  const reworded: ConditionChange[] = [];
  for (const p of policies) {
    const g0 = grants(p.before);
    const g1 = grants(p.after);
    const addresses = grantAddresses(p);
    const granted = [...g1].filter(([k]) => !g0.has(k));
    const revoked = [...g0].filter(([k]) => !g1.has(k));
    const moved = rewordings(p, granted, revoked, addresses, reworded);
    for (const [k, g] of granted) if (!moved.has(k)) out.push(accessChange(p, g, "grant", addresses(g, k)));
    for (const [k, g] of revoked) if (!moved.has(k)) out.push(accessChange(p, g, "revoke", addresses(g, k)));
    // Only a whole-policy resource edits audit configs.
    const owners = p.byBinding.get(EVERY_BINDING);
    if (owners) pushAll(audit, auditChanges(p, [...owners].sort()));
  }
  const conditions = reworded.length ? { condition_changes: sortRewordings(reworded) } : {};
  return { changes: sortChanges(out), incomplete, ...(audit.length ? { audit_changes: audit } : {}), ...conditions };
}

/** What a member's grant gives, but for the condition's wording: member, role, expression. */
const sameAccess = (g: Grant): string | undefined =>
  g.condition ? `${memberKey(g.principal)}\u0000${g.role}\u0000${g.condition.expression}` : undefined;

/**
 * The grants and revocations of `p` that only move a member between two bindings of one role whose
 * conditions have the same expression and another title or description. Google's identity of a
 * binding is its role and whole condition, so the plan removes one binding and adds another, but
 * the member keeps exactly the access it had: each such pair (one revocation, one grant) is added
 * to `out`, grouped by the two conditions, and their keys are returned, to leave out of `changes`.
 */
function rewordings(
  p: PlannedPolicy,
  granted: [string, Grant][],
  revoked: [string, Grant][],
  addresses: (g: Grant, key: string) => string[],
  out: ConditionChange[],
): Set<string> {
  const moved = new Set<string>();
  const open = new Map<string, [string, Grant][]>();
  for (const r of revoked) {
    const k = sameAccess(r[1]);
    if (k) open.set(k, [...(open.get(k) ?? []), r]);
  }
  if (!open.size) return moved;
  const groups = new Map<string, { change: ConditionChange; addresses: Set<string> }>();
  for (const [gk, g] of granted) {
    const k = sameAccess(g);
    const pair = k === undefined ? undefined : open.get(k)?.shift();
    if (!pair) continue;
    const [rk, r] = pair;
    moved.add(gk).add(rk);
    const group = `${conditionKey(r.condition)}\u0000${g.role}\u0000${conditionKey(g.condition)}`;
    let entry = groups.get(group);
    if (!entry)
      groups.set(
        group,
        (entry = {
          change: {
            object: p.name,
            kind: p.kind,
            role: g.role,
            principals: [],
            before: r.condition!,
            after: g.condition!,
            addresses: [],
          },
          addresses: new Set(),
        }),
      );
    entry.change.principals.push(g.principal);
    for (const a of [...addresses(g, gk), ...addresses(r, rk)]) entry.addresses.add(a);
  }
  for (const { change, addresses: a } of groups.values())
    out.push({ ...change, principals: change.principals.sort(), addresses: [...a].sort() });
  return moved;
}

/** By object, role, then the conditions before and after. */
function sortRewordings(changes: ConditionChange[]): ConditionChange[] {
  const key = (c: ConditionChange) => [c.object, c.role, conditionKey(c.before), conditionKey(c.after)].join("\u0000");
  return changes
    .map((c) => ({ c, k: key(c) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map((x) => x.c);
}

/** The addresses that cause a grant or revocation `g` (keyed `key` as `grants` keys it) of `p`:
 *  the member resources of that very member, the binding resources of its binding and the
 *  policy resources of the object. The binding's and policy's part is worked out once per
 *  binding (its members share it); a grant no member resource changes shares that list. */
function grantAddresses(p: PlannedPolicy): (g: Grant, key: string) => string[] {
  const memo = new Map<string, string[]>();
  const everyBinding = p.byBinding.get(EVERY_BINDING) ?? [];
  return (g, key) => {
    const bk = bindingKey(g.role, g.condition);
    let list = memo.get(bk);
    if (!list) memo.set(bk, (list = [...new Set([...(p.byBinding.get(bk) ?? []), ...everyBinding])].sort()));
    const own = p.byMember.get(key);
    return own ? [...new Set([...own, ...list])].sort() : list;
  };
}

/** { object, kind, ...grant, action, addresses } as literals: a spread followed by more keys is
 *  slow in V8 (see ../base/extended.ts), and a large apply makes one of these per member. */
function accessChange(p: PlannedPolicy, g: Grant, action: AccessChange["action"], addresses: string[]): AccessChange {
  return g.condition
    ? { object: p.name, kind: p.kind, principal: g.principal, role: g.role, condition: g.condition, action, addresses }
    : { object: p.name, kind: p.kind, principal: g.principal, role: g.role, action, addresses };
}

/** By object, role, principal, condition, then revoke before grant: a total order (the same plan
 *  always lists the same way), on keys computed once rather than per comparison. */
function sortChanges(changes: AccessChange[]): AccessChange[] {
  const keyed = changes.map((c) => ({
    c,
    k: [c.object, c.role, c.principal, conditionKey(c.condition), c.action === "revoke" ? "0" : "1"].join("\u0000"),
  }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return keyed.map((x) => x.c);
}
