// What a write does to a policy, as grants: who gains or loses which role (and condition), and
// which audit logging is turned on or off. The access summary of a plan is made from it, and so
// is apply's check that a write re-applied after another writer's change still does only what
// the plan showed (../cloud/policy-engine.ts).
import type { Condition, Policy } from "../generated/schemas.js";
import { applyModifications, type PolicyModification } from "./policy.js";
import { bindingKey, canonicalCondition } from "./conditions.js";
import { memberKey } from "./members.js";

export interface Grant {
  principal: string;
  role: string;
  condition?: Condition;
}

/** A policy's grants by key (binding key + member identity): one per member of each binding. */
export function grantsOf(p: Policy): Map<string, Grant> {
  const out = new Map<string, Grant>();
  for (const b of p.bindings ?? []) {
    // Per binding, not per member.
    const c = canonicalCondition(b.condition);
    const bk = bindingKey(b.role, b.condition);
    for (const m of b.members) out.set(`${bk}\u0000${memberKey(m)}`, c ? { principal: m, role: b.role, condition: c } : { principal: m, role: b.role });
  }
  return out;
}

/** How a person reads the making and the undoing of one item of a policy. */
interface Item {
  grant: string;
  revoke: string;
}

/** Each grant and each audit log setting of a policy, keyed. */
function effectItems(p: Policy): Map<string, Item> {
  const out = new Map<string, Item>();
  for (const [k, g] of grantsOf(p)) {
    const role = `${g.role}${g.condition ? ` if "${g.condition.title}"` : ""}`;
    out.set(k, { grant: `grant ${g.principal} ${role}`, revoke: `revoke ${g.principal} from ${role}` });
  }
  for (const a of p.auditConfigs ?? []) {
    for (const l of a.auditLogConfigs ?? []) {
      const log = `${l.logType ?? "LOG_TYPE_UNSPECIFIED"} audit logging of ${a.service ?? ""}`;
      out.set(`\u0001${a.service}\u0000${l.logType}`, { grant: `turn on ${log}`, revoke: `turn off ${log}` });
      for (const m of l.exemptedMembers ?? []) {
        out.set(`\u0001${a.service}\u0000${l.logType}\u0000${memberKey(m)}`, { grant: `exempt ${m} from ${log}`, revoke: `end the exemption of ${m} from ${log}` });
      }
    }
  }
  return out;
}

/** What going from `before` to `after` grants and revokes, by key. */
function effect(before: Policy, after: Policy): { granted: Map<string, Item>; revoked: Map<string, Item> } {
  const b = effectItems(before);
  const a = effectItems(after);
  const granted = new Map([...a].filter(([k]) => !b.has(k)));
  const revoked = new Map([...b].filter(([k]) => !a.has(k)));
  return { granted, revoked };
}

/**
 * What `mods` would do to `current` that they do not do to `expected` (the policy the plan was
 * made from): each a readable "grant X roles/Y" or "revoke X from roles/Y". Empty when the
 * write does nothing beyond what the plan showed (it may do less: a grant someone else made
 * already, a revoke someone else made already).
 */
export function unplannedEffects(expected: Policy, current: Policy, mods: readonly PolicyModification[]): string[] {
  const approved = effect(expected, applyModifications(expected, mods).policy);
  const actual = effect(current, applyModifications(current, mods).policy);
  const out: string[] = [];
  for (const [k, item] of actual.revoked) if (!approved.revoked.has(k)) out.push(item.revoke);
  for (const [k, item] of actual.granted) if (!approved.granted.has(k)) out.push(item.grant);
  return out;
}
