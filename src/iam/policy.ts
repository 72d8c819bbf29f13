// Pure policy edits shared by the policy engine (client side) and the emulator (server side).
import type { Binding, Condition, Policy } from "../generated/schemas.js";
import { bindingKey, canonicalCondition } from "./conditions.js";
import { dedupeMembers, memberKey, sameMemberSet } from "./members.js";

/** One change to one policy. Several are applied to one read and written once. */
export type PolicyModification =
  | { kind: "setBinding"; role: string; condition?: Condition; members: string[] }
  /** Removes every member of the binding except `keep` (grants other resources hold). */
  | { kind: "removeBinding"; role: string; condition?: Condition; keep?: string[] }
  | { kind: "addMember"; role: string; condition?: Condition; member: string }
  | { kind: "removeMember"; role: string; condition?: Condition; member: string };

// Revocations first, then authoritative sets, then additions: a replacement that moves a grant
// from one resource to another in the same batch ends with the grant present.
const ORDER: Record<PolicyModification["kind"], number> = {
  removeBinding: 0,
  removeMember: 0,
  setBinding: 1,
  addMember: 2,
};

export function findBinding(policy: Policy, role: string, condition?: Condition | null): Binding | undefined {
  const key = bindingKey(role, condition);
  return (policy.bindings ?? []).find((b) => bindingKey(b.role, b.condition) === key);
}

/**
 * Applies `mods` to a copy of `policy`, preserving every other binding, every other member,
 * `auditConfigs` and the version (raised to 3 when a conditional binding is present).
 * Returns the new policy and whether anything changed; an unchanged policy need not be written.
 */
export function applyModifications(policy: Policy, mods: readonly PolicyModification[]): { policy: Policy; changed: boolean } {
  const bindings: Binding[] = (policy.bindings ?? []).map((b) => ({ ...b, members: [...b.members] }));
  const index = new Map<string, Binding>();
  for (const b of bindings) {
    const key = bindingKey(b.role, b.condition);
    const existing = index.get(key);
    if (existing) {
      // Google merges duplicate (role, condition) bindings; so do we.
      for (const m of b.members) {
        const k = memberKey(m);
        if (!existing.members.some((x) => memberKey(x) === k)) existing.members.push(m);
      }
      b.members = [];
    } else index.set(key, b);
  }
  let changed = false;
  const sorted = [...mods].sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
  for (const mod of sorted) {
    const key = bindingKey(mod.role, mod.condition);
    let binding = index.get(key);
    switch (mod.kind) {
      case "removeBinding":
        if (binding) {
          const keep = new Set((mod.keep ?? []).map(memberKey));
          const rest = binding.members.filter((m) => keep.has(memberKey(m)));
          if (rest.length !== binding.members.length) {
            binding.members = rest;
            changed = true;
          }
        }
        break;
      case "removeMember":
        if (binding) {
          const before = binding.members.length;
          const k = memberKey(mod.member);
          binding.members = binding.members.filter((m) => memberKey(m) !== k);
          if (binding.members.length !== before) changed = true;
        }
        break;
      case "setBinding":
        if (!binding) {
          if (mod.members.length === 0) break;
          binding = { role: mod.role, members: [], ...(mod.condition ? { condition: canonicalCondition(mod.condition)! } : {}) };
          bindings.push(binding);
          index.set(key, binding);
        }
        if (!sameMemberSet(binding.members, mod.members)) {
          binding.members = dedupeMembers(mod.members);
          changed = true;
        }
        break;
      case "addMember":
        if (!binding) {
          binding = { role: mod.role, members: [], ...(mod.condition ? { condition: canonicalCondition(mod.condition)! } : {}) };
          bindings.push(binding);
          index.set(key, binding);
        }
        const k = memberKey(mod.member);
        if (!binding.members.some((m) => memberKey(m) === k)) {
          binding.members.push(mod.member);
          changed = true;
        }
        break;
    }
  }
  const kept = bindings.filter((b) => b.members.length > 0);
  const next: Policy = { ...policy, bindings: kept };
  const conditional = kept.some((b) => b.condition);
  next.version = conditional ? 3 : policy.version && policy.version > 0 ? policy.version : 1;
  return { policy: next, changed };
}

/** Number of principal entries in a policy (Google's 1,500-principal limit counts these). */
export function principalCount(policy: Policy): number {
  return (policy.bindings ?? []).reduce((n, b) => n + b.members.length, 0);
}
