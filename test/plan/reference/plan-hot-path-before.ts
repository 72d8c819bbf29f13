// The definitions of the no-op plan's hot path as they were before they were made cheaper (commit
// 4615a91), kept word for word as the reference the property tests compare the new code with.
import type { Binding, Policy, ResourceChange, State, StateResource } from "../../../src/generated/schemas.js";
import type { StackModel } from "../../../src/config/model.js";
import { UNKNOWN, isUnknown } from "../../../src/language/expressions.js";
import type { IamDriver, IamInputs, InputField } from "../../../src/drivers/types.js";
import { resourceDriver } from "../../../src/drivers/registry.js";
import type { PolicyRef } from "../../../src/contracts/cloud-port.js";
import { bindingKey } from "../../../src/iam/conditions.js";
import { memberKey, normalizeMembers, sameMemberSet, sameMembersAsWritten } from "../../../src/iam/members.js";
import { type ChangeBase, change, driftChange, plannedValue } from "../../../src/plan/change-builders.js";
// fieldEqual and replacement are as they were: the old definitions below use them.
import { fieldEqual } from "../../../src/plan/compare.js";
import { replacement, withIgnored, type Decision, type ExistingInput } from "../../../src/plan/decide.js";
import { stackPolicies, statePolicies } from "../../../src/plan/refresh.js";
import { extended } from "../../../src/base/extended.js";

/** findBinding as it was: a scan of the bindings per call. */
function findBinding(policy: Policy, role: string, condition?: Binding["condition"] | null): Binding | undefined {
  const key = bindingKey(role, condition);
  return (policy.bindings ?? []).find((b) => bindingKey(b.role, b.condition) === key);
}

export function changedFields(driver: IamDriver, a: IamInputs, b: IamInputs): InputField[] {
  return driver.inputFields.filter((f) => !fieldEqual(f, a, b));
}

export function sameInputs(driver: IamDriver, a: IamInputs, b: IamInputs): boolean {
  return changedFields(driver, a, b).length === 0;
}

export function decideExisting(i: ExistingInput): Decision {
  const { driver: d, observed: o, state } = i;
  const base: ChangeBase = state.adopted ? extended(i.base, { before_adopted: true }) : i.base;
  const priorInputs = state.inputs as unknown as IamInputs;
  const before = o.inputs ? (o.outputs ?? d.outputs(o.inputs, o.etag)) : null;
  const drift = !o.inputs || !sameInputs(d, priorInputs, o.inputs) ? driftChange(base, state, before) : undefined;
  const withDrift = <T extends object>(x: T) => (drift ? extended(x, { drift }) : x);
  if (o.missing && (isUnknown(i.desired.name) || i.desired.name === priorInputs.name))
    return withDrift({ kind: "missing" as const });
  if (!o.inputs) {
    const after = plannedValue(d, i.desired, UNKNOWN);
    const { before_adopted: _, ...gone } = base;
    return withDrift({
      kind: "change" as const,
      change: { ...change(gone, "create", null, after), action_reason: "create_because_gone" as const },
      value: after,
    });
  }
  const target = withIgnored(i.desired, o.inputs, i.ignoreChanges);
  const fields = changedFields(d, o.inputs, target);
  const replaceFields = fields.filter((f) => d.replaceOn.includes(f));
  if (replaceFields.length || i.replaceRequested) return withDrift(replacement(i, base, before, target, replaceFields));
  const kept: ChangeBase = state.adopted ? extended(base, { after_adopted: true }) : base;
  if (fields.length) {
    const after = plannedValue(d, target, UNKNOWN);
    return withDrift({ kind: "change" as const, change: change(kept, "update", before, after), value: after });
  }
  const stateOnly = (state.protect === true) !== i.protect ? { state_only: ["protect" as const] } : {};
  return withDrift({
    kind: "change" as const,
    change: { ...change(kept, "no-op", before, before), ...stateOnly },
    value: before,
  });
}

export function* readAheadPolicies(
  stack: StackModel,
  prior: State | undefined,
  opts: { refresh: boolean; destroy: boolean },
): Generator<PolicyRef> {
  if (!opts.refresh) return;
  const seen = new Set<string>();
  for (const p of opts.destroy ? statePolicies(prior) : [...statePolicies(prior), ...stackPolicies(stack)]) {
    const key = `${p.kind} ${p.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    yield p;
  }
}

export function stateResourcesByPolicy(prior: State | undefined): Map<string, { address: string; type: string }[]> {
  const out = new Map<string, { address: string; type: string }[]>();
  for (const r of prior?.resources ?? []) {
    const d = resourceDriver(r.type);
    if (!d) continue;
    const key = `${d.kind} ${String(r.inputs.name)}`;
    const list = out.get(key);
    if (list) list.push({ address: r.address, type: r.type });
    else out.set(key, [{ address: r.address, type: r.type }]);
  }
  return out;
}

/** The binding and member drivers' observe (src/drivers/iam-driver.ts). */
export function iamObserve(isBinding: boolean, i: IamInputs, policy: Policy): IamInputs | undefined {
  const binding: Binding | undefined = findBinding(policy, i.role ?? "", i.condition);
  if (!binding || binding.members.length === 0)
    return isBinding && (i.members ?? []).length === 0 ? extended(i, { members: [] }) : undefined;
  if (isBinding) {
    const mine = i.members ?? [];
    const members =
      sameMembersAsWritten(binding.members, mine) || sameMemberSet(binding.members, mine)
        ? mine
        : normalizeMembers(binding.members);
    return extended(i, { members });
  }
  const key = memberKey(i.member ?? "");
  return binding.members.some((m) => memberKey(m) === key) ? i : undefined;
}

export type { ResourceChange, StateResource };
