// What the drivers' observe and outputs ask once per resource, answered once per policy: a plan
// observes the resources of a policy one after the other (ten to one in the bench).
import type { Binding, Condition, Policy } from "../generated/schemas.js";
import { bindingKey } from "../iam/conditions.js";
import { findBinding } from "../iam/policy.js";
import { projectOf } from "../cloud/names.js";
import type { PolicyKind } from "../gcp/object-kinds.js";

/** projectOf(kind, name), remembering the last name's answer (no key built for the same name). */
export function lastProjectOf(kind: PolicyKind): (name: string) => string {
  let lastName: string | undefined;
  let lastProject = "";
  return (name) => {
    if (typeof name !== "string") return projectOf(kind, name);
    if (name !== lastName) {
      lastProject = projectOf(kind, name);
      lastName = name;
    }
    return lastProject;
  };
}

/** A policy's bindings by bindingKey, the first of each key (as Array.find meets them); none
 *  when indexing them would throw (findBinding then throws, or not, as it always did). */
interface BindingIndex {
  bindings: unknown;
  length: number;
  byKey: Map<string, Binding> | undefined;
}

const indexes = new WeakMap<Policy, BindingIndex>();

function indexBindings(policy: Policy): BindingIndex {
  const bindings = policy.bindings;
  const length = bindings?.length ?? 0;
  const byKey = new Map<string, Binding>();
  if (bindings !== undefined && bindings !== null && !Array.isArray(bindings)) return { bindings, length, byKey: undefined };
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

/** findBinding(policy, role, condition) (../iam/policy.ts), its bindings indexed once per policy
 *  (again if its bindings are replaced): a key per binding, not one per binding per resource. */
export function policyBinding(policy: Policy, role: string, condition?: Condition | null): Binding | undefined {
  let index = indexes.get(policy);
  if (index === undefined || index.bindings !== policy.bindings || index.length !== (policy.bindings?.length ?? 0)) {
    index = indexBindings(policy);
    indexes.set(policy, index);
  }
  return index.byKey ? index.byKey.get(bindingKey(role, condition)) : findBinding(policy, role, condition);
}
