// What a write does to a policy, as grants: who gains or loses which role (and condition), and
// which audit logging is turned on or off. The access summary of a plan is made from it, and so
// is apply's check that a write re-applied after another writer's change still does only what
// the plan showed (../cloud/policy-engine.ts).
import type { AuditConfig, Condition, Policy } from "../generated/schemas.js";
import { applyModifications, type PolicyModification } from "./policy.js";
import { bindingKey, canonicalCondition } from "./conditions.js";
import { memberKey } from "./members.js";

export interface Grant {
  principal: string;
  role: string;
  condition?: Condition;
}

/** The key of one member's grant in one binding (binding key + member identity). */
export function grantKey(bindingKey: string, member: string): string {
  return `${bindingKey}\u0000${memberKey(member)}`;
}

/** A policy's grants by grantKey: one per member of each binding. */
export function grantsOf(p: Policy): Map<string, Grant> {
  const out = new Map<string, Grant>();
  for (const b of p.bindings ?? []) {
    // Per binding, not per member.
    const c = canonicalCondition(b.condition);
    const bk = bindingKey(b.role, b.condition);
    for (const m of b.members)
      out.set(grantKey(bk, m), c ? { principal: m, role: b.role, condition: c } : { principal: m, role: b.role });
  }
  return out;
}

/** How a person reads the making and the undoing of one item of a policy. */
interface Item {
  grant: string;
  revoke: string;
}

/** One audit log setting of a policy: a service's log type with its exemptions. */
export interface AuditSetting {
  service: string;
  log_type: string;
  exempted_members: string[];
}

/** The key of a setting: service, log type and exemptions (by identity). */
export function auditKey(c: AuditSetting): string {
  return JSON.stringify([c.service, c.log_type, c.exempted_members.map(memberKey).sort()]);
}

/** Each audit log setting of `configs`, by auditKey. */
export function auditSettings(configs: readonly AuditConfig[] | undefined): Map<string, AuditSetting> {
  const out = new Map<string, AuditSetting>();
  for (const c of configs ?? []) {
    for (const l of c.auditLogConfigs ?? []) {
      const e: AuditSetting = {
        service: c.service ?? "",
        log_type: l.logType ?? "LOG_TYPE_UNSPECIFIED",
        exempted_members: [...(l.exemptedMembers ?? [])].sort(),
      };
      out.set(auditKey(e), e);
    }
  }
  return out;
}

/** "DATA_READ audit logging of allServices (exempting user:x@example.com)" */
export function auditText(c: AuditSetting): string {
  return (
    `${c.log_type} audit logging of ${c.service}` +
    `${c.exempted_members.length ? ` (exempting ${c.exempted_members.join(", ")})` : ""}`
  );
}

/** Each grant and each audit log setting of a policy, keyed. */
function effectItems(p: Policy): Map<string, Item> {
  const out = new Map<string, Item>();
  for (const [k, g] of grantsOf(p)) {
    const role = `${g.role}${g.condition ? ` if "${g.condition.title}"` : ""}`;
    out.set(k, { grant: `grant ${g.principal} ${role}`, revoke: `revoke ${g.principal} from ${role}` });
  }
  for (const [k, e] of auditSettings(p.auditConfigs))
    out.set(`\u0001${k}`, { grant: `turn on ${auditText(e)}`, revoke: `turn off ${auditText(e)}` });
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
