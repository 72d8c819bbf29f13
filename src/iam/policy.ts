// Pure policy edits shared by the policy engine (client side) and the emulator (server side).
import type { AuditConfig, Binding, Condition, Policy } from "../generated/schemas.js";
import { bindingKey, canonicalCondition, conditionKey } from "./conditions.js";
import { dedupeMembers, memberKey, normalizeMembers, sameMemberSet, sameMembersAsWritten } from "./members.js";

/** One change to one policy. Several are applied to one read and written once. */
export type PolicyModification =
  /** The whole policy (a policy resource): exactly these bindings and audit configs. */
  | { kind: "setPolicy"; bindings: Binding[]; auditConfigs: AuditConfig[] }
  | { kind: "setBinding"; role: string; condition?: Condition; members: string[] }
  /** Removes every member of the binding except `keep` (grants other resources hold). */
  | { kind: "removeBinding"; role: string; condition?: Condition; keep?: string[] }
  | { kind: "addMember"; role: string; condition?: Condition; member: string }
  | { kind: "removeMember"; role: string; condition?: Condition; member: string };

type BindingEdit = Exclude<PolicyModification, { kind: "setPolicy" }>;

// A whole policy first; then revocations, then authoritative sets, then additions: a replacement
// that moves a grant from one resource to another in the same batch ends with the grant present.
const ORDER: Record<PolicyModification["kind"], number> = {
  setPolicy: -1,
  removeBinding: 0,
  removeMember: 0,
  setBinding: 1,
  addMember: 2,
};

/** A policy's bindings by bindingKey, the first of each key (as Array.find meets them); none
 *  when indexing them would throw (findBinding then throws, or not, as it always did). */
interface BindingsByKey {
  bindings: unknown;
  length: number;
  byKey: Map<string, Binding> | undefined;
}

const indexes = new WeakMap<Policy, BindingsByKey>();

function indexBindings(policy: Policy): BindingsByKey {
  const bindings = policy.bindings;
  const length = bindings?.length ?? 0;
  const byKey = new Map<string, Binding>();
  if (bindings !== undefined && bindings !== null && !Array.isArray(bindings))
    return { bindings, length, byKey: undefined };
  try {
    for (const b of bindings ?? []) {
      const key = bindingKey(b.role, b.condition);
      if (!byKey.has(key)) byKey.set(key, b);
    }
  } catch {
    return { bindings, length, byKey: undefined };
  }
  return { bindings, length, byKey };
}

/** The binding of (role, condition) in `policy`: the first, as Array.find meets them. A plan asks
 *  this for each of a policy's resources (ten to one in the bench), so the bindings are indexed
 *  once per policy (again if its bindings are replaced): a key per binding, not one per binding
 *  per resource. */
export function findBinding(policy: Policy, role: string, condition?: Condition | null): Binding | undefined {
  let index = indexes.get(policy);
  if (index === undefined || index.bindings !== policy.bindings || index.length !== (policy.bindings?.length ?? 0)) {
    index = indexBindings(policy);
    indexes.set(policy, index);
  }
  if (index.byKey) return index.byKey.get(bindingKey(role, condition));
  const key = bindingKey(role, condition);
  return (policy.bindings ?? []).find((b) => bindingKey(b.role, b.condition) === key);
}

/** Whether any of `mods` sets audit configs (the write must then include them in its mask). */
export function editsAuditConfigs(mods: readonly PolicyModification[]): boolean {
  return mods.some((m) => m.kind === "setPolicy");
}

/** The bindings of a policy as (role, condition) → binding, merging duplicates as Google does. */
class BindingIndex {
  readonly bindings: Binding[] = [];
  private readonly index = new Map<string, Binding>();

  constructor(from: readonly Binding[]) {
    for (const b of from) this.merge(b.role, b.condition, b.members);
  }

  get(role: string, condition: Condition | undefined | null): Binding | undefined {
    return this.index.get(bindingKey(role, condition));
  }

  /** The binding of (role, condition), made empty when there is none. */
  open(role: string, condition: Condition | undefined | null): Binding {
    const found = this.get(role, condition);
    if (found) return found;
    const binding: Binding = { role, members: [], ...(condition ? { condition: canonicalCondition(condition)! } : {}) };
    this.bindings.push(binding);
    this.index.set(bindingKey(role, condition), binding);
    return binding;
  }

  merge(role: string, condition: Condition | undefined | null, members: readonly string[]): void {
    const existing = this.get(role, condition);
    if (!existing) {
      this.bindings.push({ role, members: [...members], ...(condition ? { condition } : {}) });
      this.index.set(bindingKey(role, condition), this.bindings.at(-1)!);
      return;
    }
    for (const m of members) {
      const k = memberKey(m);
      if (!existing.members.some((x) => memberKey(x) === k)) existing.members.push(m);
    }
  }

  kept(): Binding[] {
    return this.bindings.filter((b) => b.members.length > 0);
  }
}

/** Applies one binding edit; true when it changed the policy. */
function applyEdit(index: BindingIndex, mod: BindingEdit): boolean {
  const binding = index.get(mod.role, mod.condition);
  switch (mod.kind) {
    case "removeBinding": {
      if (!binding) return false;
      const keep = new Set((mod.keep ?? []).map(memberKey));
      const rest = binding.members.filter((m) => keep.has(memberKey(m)));
      if (rest.length === binding.members.length) return false;
      binding.members = rest;
      return true;
    }
    case "removeMember": {
      if (!binding) return false;
      const before = binding.members.length;
      const k = memberKey(mod.member);
      binding.members = binding.members.filter((m) => memberKey(m) !== k);
      return binding.members.length !== before;
    }
    case "setBinding": {
      if (!binding && mod.members.length === 0) return false;
      const target = binding ?? index.open(mod.role, mod.condition);
      if (sameMemberSet(target.members, mod.members)) return false;
      target.members = dedupeMembers(mod.members);
      return true;
    }
    case "addMember": {
      const target = binding ?? index.open(mod.role, mod.condition);
      const k = memberKey(mod.member);
      if (target.members.some((m) => memberKey(m) === k)) return false;
      target.members.push(mod.member);
      return true;
    }
  }
}

/** The bindings and audit configs a whole-policy edit asks for; whether they differ from `policy`'s. */
function applySetPolicy(
  policy: Policy,
  mod: Extract<PolicyModification, { kind: "setPolicy" }>,
): { index: BindingIndex; auditConfigs: AuditConfig[]; changed: boolean } {
  const desired = new BindingIndex([]);
  for (const b of mod.bindings)
    if (b.members.length) desired.merge(b.role, canonicalCondition(b.condition), dedupeMembers(b.members));
  const changed =
    !sameBindings(policy.bindings ?? [], mod.bindings) || !sameAuditConfigs(policy.auditConfigs, mod.auditConfigs);
  return { index: desired, auditConfigs: mod.auditConfigs, changed };
}

/** Bindings with members, duplicates of a (role, condition) merged as Google merges them, members
 *  normalised, conditions canonical; in a stable order (role, then condition). */
export function canonicalBindings(bindings: readonly Binding[]): Binding[] {
  const merged = new Map<string, Binding>();
  for (const b of bindings) {
    const key = bindingKey(b.role, b.condition);
    const prior = merged.get(key);
    const condition = canonicalCondition(b.condition);
    merged.set(key, {
      role: b.role,
      members: [...(prior?.members ?? []), ...b.members],
      ...(condition ? { condition } : {}),
    });
  }
  return [...merged.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, b]) => ({ ...b, members: normalizeMembers(b.members) }))
    .filter((b) => b.members.length > 0);
}

/** The same bindings in the same order and spelling (the usual no-op: nothing to canonicalise). */
function sameAsWritten(a: readonly Binding[], b: readonly Binding[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.role !== y.role || !sameMembersAsWritten(x.members, y.members)) return false;
    if (x.condition !== y.condition && conditionKey(x.condition) !== conditionKey(y.condition)) return false;
  }
  return true;
}

/** Whether two policies' bindings grant the same (members by identity, any order). */
export function sameBindings(a: readonly Binding[], b: readonly Binding[]): boolean {
  if (sameAsWritten(a, b)) return true;
  const x = canonicalBindings(a);
  const y = canonicalBindings(b);
  return (
    x.length === y.length &&
    x.every(
      (bx, n) =>
        bindingKey(bx.role, bx.condition) === bindingKey(y[n]!.role, y[n]!.condition) &&
        sameMemberSet(bx.members, y[n]!.members),
    )
  );
}

/** Whether two lists of audit configs configure the same logging. */
export function sameAuditConfigs(
  a: readonly AuditConfig[] | undefined,
  b: readonly AuditConfig[] | undefined,
): boolean {
  return JSON.stringify(canonicalAuditConfigs(a ?? [])) === JSON.stringify(canonicalAuditConfigs(b ?? []));
}

/** Audit configs in a comparable form: services and log types sorted, exemptions by identity. */
export function canonicalAuditConfigs(configs: readonly AuditConfig[]): AuditConfig[] {
  return [...configs]
    .map((c) => ({
      service: c.service ?? "",
      auditLogConfigs: [...(c.auditLogConfigs ?? [])]
        .map((l) => ({
          logType: l.logType ?? "LOG_TYPE_UNSPECIFIED",
          exemptedMembers: [...(l.exemptedMembers ?? [])].map(memberKey).sort(),
        }))
        .sort((x, y) => x.logType.localeCompare(y.logType)),
    }))
    .sort((x, y) => x.service.localeCompare(y.service));
}

/**
 * Applies `mods` to a copy of `policy`. Binding edits preserve every other binding, every other
 * member, `auditConfigs` and the version (raised to 3 when a conditional binding is present); a
 * whole-policy edit (`setPolicy`) replaces the bindings and the audit configs. Returns the new
 * policy and whether anything changed; an unchanged policy need not be written.
 */
export function applyModifications(
  policy: Policy,
  mods: readonly PolicyModification[],
): { policy: Policy; changed: boolean } {
  let index = new BindingIndex((policy.bindings ?? []).map((b) => ({ ...b, members: [...b.members] })));
  let auditConfigs = policy.auditConfigs;
  let changed = false;
  for (const mod of [...mods].sort((a, b) => ORDER[a.kind] - ORDER[b.kind])) {
    if (mod.kind !== "setPolicy") {
      changed = applyEdit(index, mod) || changed;
      continue;
    }
    const set = applySetPolicy(policy, mod);
    index = set.index;
    auditConfigs = set.auditConfigs;
    changed = set.changed || changed;
  }
  const kept = index.kept();
  const { auditConfigs: _old, ...rest } = policy;
  const next: Policy = { ...rest, bindings: kept, ...(auditConfigs && auditConfigs.length ? { auditConfigs } : {}) };
  const conditional = kept.some((b) => b.condition);
  next.version = conditional ? 3 : policy.version && policy.version > 0 ? policy.version : 1;
  return { policy: next, changed };
}

/** Number of principal entries in a policy (Google's 1,500-principal limit counts these). */
export function principalCount(policy: Policy): number {
  return (policy.bindings ?? []).reduce((n, b) => n + b.members.length, 0);
}
