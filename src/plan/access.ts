// The access delta: who gains or loses which role on which object, computed from the effective
// policy before (live) and after (the planned modifications applied to it). It includes members a
// binding removes, which a resource-level diff does not show.
import type { AccessChange, AccessDelta, Condition, Policy, ResourceChange } from "../generated/schemas.js";
import { resourceDriver } from "../drivers/registry.js";
import { inputsOf } from "../drivers/inputs.js";
import { HeldGrants } from "./ownership.js";
import { applyModifications, type PolicyModification } from "../iam/policy.js";
import { bindingKey, canonicalCondition, conditionKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";

function grants(p: Policy): Map<string, { principal: string; role: string; condition?: Condition }> {
  const out = new Map<string, { principal: string; role: string; condition?: Condition }>();
  for (const b of p.bindings ?? []) {
    // Per binding, not per member.
    const c = canonicalCondition(b.condition);
    const bk = bindingKey(b.role, b.condition);
    for (const m of b.members) out.set(`${bk}\u0000${memberKey(m)}`, { principal: m, role: b.role, ...(c ? { condition: c } : {}) });
  }
  return out;
}

type PolicyKindName = "restorePlan" | "endpoint";

interface PolicyEdits {
  kind: PolicyKindName;
  name: string;
  mods: PolicyModification[];
  /** Which addresses edit each binding (role + condition). */
  byBinding: Map<string, Set<string>>;
}

/** Every policy the plan writes, with the modifications that reach the cloud: revokes of adopted
 *  grants and of grants another surviving resource holds are left out, as apply leaves them. */
function policyEdits(changes: readonly ResourceChange[]): { edits: Map<string, PolicyEdits>; incomplete: Set<string> } {
  const edits = new Map<string, PolicyEdits>();
  const incomplete = new Set<string>();
  const held = HeldGrants.of(changes);
  for (const c of changes) {
    const d = c.mode === "managed" ? resourceDriver(c.type) : undefined;
    const a = c.change.actions;
    if (!d || (a.length === 1 && a[0] === "no-op")) continue;
    if (c.config && a[0] !== "delete") {
      if (c.policy) incomplete.add(c.policy);
      continue;
    }
    const prior = c.change.before ? inputsOf(d, c.change.before) : undefined;
    const desired = c.change.after ? inputsOf(d, c.change.after) : undefined;
    for (const planned of d.modifications(a[0] === "create" && a.length === 1 && !c.change.importing ? undefined : prior, desired)) {
      const revoke = planned.kind === "removeBinding" || planned.kind === "removeMember";
      // An adopted grant predates converge: revoking the resource leaves it in place.
      if (revoke && c.before_adopted) continue;
      const object = (revoke ? prior : desired)!.name;
      const m = held.guard(d.kind, object, [planned])[0];
      if (!m) continue;
      const key = `${d.kind} ${object}`;
      let entry = edits.get(key);
      if (!entry) edits.set(key, (entry = { kind: d.kind, name: object, mods: [], byBinding: new Map() }));
      entry.mods.push(m);
      const bk = bindingKey(m.role, m.condition);
      const owners = entry.byBinding.get(bk);
      if (owners) owners.add(c.address);
      else entry.byBinding.set(bk, new Set([c.address]));
    }
  }
  return { edits, incomplete };
}

export interface PlannedPolicy {
  kind: PolicyKindName;
  name: string;
  /** The live policy as read during plan (empty when the object has none yet). */
  before: Policy;
  /** The policy once apply has written it. */
  after: Policy;
  /** The addresses that edit a binding (role and condition). */
  addresses: (role: string, condition?: Condition) => string[];
}

/** The policies the plan writes, before and after. Those not read (no refresh) are incomplete. */
export function plannedPolicies(changes: readonly ResourceChange[], live: ReadonlyMap<string, Policy>, refreshed: boolean): { policies: PlannedPolicy[]; incomplete: string[] } {
  const { edits, incomplete } = policyEdits(changes);
  const policies: PlannedPolicy[] = [];
  for (const [key, entry] of edits) {
    const read = live.get(key);
    if (!read && refreshed === false) {
      incomplete.add(entry.name);
      continue;
    }
    const before: Policy = read ?? { bindings: [] };
    const addresses = (role: string, condition?: Condition) => [...(entry.byBinding.get(bindingKey(role, condition)) ?? [])].sort();
    policies.push({ kind: entry.kind, name: entry.name, before, after: applyModifications(before, entry.mods).policy, addresses });
  }
  return { policies, incomplete: [...incomplete].sort() };
}

export function accessDelta(changes: readonly ResourceChange[], live: ReadonlyMap<string, Policy>, refreshed: boolean): AccessDelta {
  const { policies, incomplete } = plannedPolicies(changes, live, refreshed);
  const out: AccessChange[] = [];
  for (const p of policies) {
    const g0 = grants(p.before);
    const g1 = grants(p.after);
    for (const [k, g] of g1) if (!g0.has(k)) out.push({ object: p.name, kind: p.kind, ...g, action: "grant", addresses: p.addresses(g.role, g.condition) });
    for (const [k, g] of g0) if (!g1.has(k)) out.push({ object: p.name, kind: p.kind, ...g, action: "revoke", addresses: p.addresses(g.role, g.condition) });
  }
  return { changes: sortChanges(out), incomplete };
}

/** By object, role, principal, condition, then revoke before grant: a total order (the same plan
 *  always lists the same way), on keys computed once rather than per comparison. */
function sortChanges(changes: AccessChange[]): AccessChange[] {
  const keyed = changes.map((c) => ({ c, k: [c.object, c.role, c.principal, conditionKey(c.condition), c.action === "revoke" ? "0" : "1"].join("\u0000") }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return keyed.map((x) => x.c);
}
