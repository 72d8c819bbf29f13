// What a Plan records of the stack and of the state besides its changes: the stack as written
// (apply evaluates the values known only during apply from it; `plan --json` describes it as
// Terraform's configuration) and the state as refresh left it (Terraform's prior_state); and
// which state resources each policy read refreshes.
import type { ConfiguredResource, ConfiguredVariable, Plan, State, StateResource } from "../generated/schemas.js";
import type { StackModel } from "../config/model.js";
import { resourceDriver } from "../drivers/registry.js";

/** The stack's outputs, variables and resources as written, in the stack's order. */
export function stackConfiguration(stack: StackModel): NonNullable<Plan["configuration"]> {
  const variables: ConfiguredVariable[] = [...stack.variables.values()].map((v) =>
    v.invoke
      ? { name: v.name, function: v.invoke.token, arguments: v.invoke.arguments }
      : { name: v.name, value: v.value },
  );
  const resources: ConfiguredResource[] = [...stack.resources.values()].map((r) => ({
    name: r.name,
    type: r.type,
    properties: r.properties,
    depends_on: r.options.dependsOn,
  }));
  return {
    outputs: Object.fromEntries([...stack.outputs.values()].map((o) => [o.name, o.value])),
    variables,
    resources,
  };
}

/** The plan's record of its prior state: lineage and serial (apply checks them) and, when there
 *  is a state, its resources as refreshed and its outputs. */
export function priorStateRecord(prior: State | undefined, refreshed: readonly StateResource[]): Plan["prior_state"] {
  if (!prior) return { lineage: null, serial: null };
  return {
    lineage: prior.lineage,
    serial: prior.serial,
    resources: refreshed.map((r) => ({
      address: r.address,
      type: r.type,
      values: r.outputs,
      dependencies: r.dependencies,
    })),
    outputs: prior.outputs,
  };
}

/** The state's resources by the policy that holds them ("{kind} {name}"): what each read of a
 *  policy refreshes (for the refresh events). */
export function stateResourcesByPolicy(prior: State | undefined): Map<string, { address: string; type: string }[]> {
  const out = new Map<string, { address: string; type: string }[]>();
  // The list of the resource before, when this one is on the same policy (mostly so: a policy's
  // resources are side by side): no key to build nor look up.
  let last: { kind: string; name: string; list: { address: string; type: string }[] } | undefined;
  for (const r of prior?.resources ?? []) {
    const d = resourceDriver(r.type);
    if (!d) continue;
    const name = String(r.inputs.name);
    if (last !== undefined && name === last.name && d.kind === last.kind) {
      last.list.push({ address: r.address, type: r.type });
      continue;
    }
    const key = `${d.kind} ${name}`;
    let list = out.get(key);
    if (list) list.push({ address: r.address, type: r.type });
    else out.set(key, (list = [{ address: r.address, type: r.type }]));
    last = { kind: d.kind, name, list };
  }
  return out;
}
