// The grants the stack's resources hold once the plan is applied, as the plan's data records
// them: each managed change's desired value (not a delete, its values known at plan time) turned
// into its policy edits. The review page marks those of them the plan does not change as
// unchanged; grants made outside converge that the plan leaves alone are not in the plan's data.
import type { ResourceChange } from "../../../generated/schemas.js";
import { resourceDriver } from "../../../drivers/registry.js";
import { inputsOf } from "../../../drivers/inputs.js";
import { applyModifications } from "../../../iam/policy.js";
import { type Grant, grantsOf } from "../../../iam/policy-effect.js";
import { displayAction } from "../../../contracts/actions.js";

export interface HeldGrant extends Grant {
  object: string;
  kind: string;
  /** The address of the resource that holds it. */
  address: string;
}

/** Every grant the plan's surviving managed resources hold after apply. */
export function heldGrantsAfter(changes: readonly ResourceChange[]): HeldGrant[] {
  const out: HeldGrant[] = [];
  for (const c of changes) {
    if (c.mode !== "managed" || c.config || !c.change.after || displayAction(c) === "delete") continue;
    const held = grantsIn(c.type, c.change.after);
    if (!held) continue;
    for (const g of held.grants.values()) out.push({ ...g, object: held.object, kind: held.kind, address: c.address });
  }
  return out;
}

interface HeldBy {
  object: string;
  kind: string;
  grants: Map<string, Grant>;
}

/** The grants one resource value (a change's before or after) holds, by grantKey, with its object. */
export function grantsIn(type: string, value: unknown): HeldBy | undefined {
  const d = resourceDriver(type);
  if (!d || !value) return undefined;
  const inputs = inputsOf(d, value);
  const { policy } = applyModifications({ bindings: [] }, d.modifications(undefined, inputs));
  return { object: inputs.name, kind: d.kind, grants: grantsOf(policy) };
}
