// The policies of the objects a state's resources are on, as the state knows them: the grants
// (and, for a policy resource, the audit configs) its resources hold, nothing else. A plan made
// without refresh is computed from this view; apply holds its writes to the changes the plan
// showed on it (../cloud/policy-engine.ts), as it holds a refreshed plan's to the policies read.
import type { Policy, State } from "../generated/schemas.js";
import { resourceDriver } from "../drivers/registry.js";
import { inputsOf } from "../drivers/inputs.js";
import { applyModifications, type PolicyModification } from "../iam/policy.js";
import type { PolicyKind } from "../contracts/cloud-port.js";
import { pushAll } from "../base/arrays.js";

/** The state's view of each policy ("{kind} {name}"), worked out on first use. */
export function stateView(state: State): (kind: PolicyKind, name: string) => Policy {
  let grants: Map<string, PolicyModification[]> | undefined;
  return (kind, name) => {
    grants ??= grantsByPolicy(state);
    return applyModifications({ bindings: [] }, grants.get(`${kind} ${name}`) ?? []).policy;
  };
}

function grantsByPolicy(state: State): Map<string, PolicyModification[]> {
  const out = new Map<string, PolicyModification[]>();
  for (const r of state.resources) {
    const d = resourceDriver(r.type);
    if (!d) continue;
    const inputs = inputsOf(d, r.inputs);
    if (typeof inputs.name !== "string") continue;
    const key = `${d.kind} ${inputs.name}`;
    const mods = out.get(key) ?? [];
    pushAll(mods, d.modifications(undefined, inputs));
    out.set(key, mods);
  }
  return out;
}
