// Which grants the plan's surviving resources own. A delete must not revoke a tuple that another
// resource in the same plan takes over (a renamed or moved resource), or the grant would vanish
// after its new owner created it.
import type { ResourceChange } from "../generated/schemas.js";
import { resourceDriver } from "../drivers/registry.js";
import { inputsOf } from "../drivers/inputs.js";

export function ownedKeys(changes: readonly ResourceChange[]): Set<string> {
  const keys = new Set<string>();
  // Only deletes are checked against the keys: without one there is nothing to compute.
  if (!changes.some(isDelete)) return keys;
  for (const c of changes) {
    if (c.mode !== "managed" || c.config || !c.change.after || isDelete(c)) continue;
    const d = resourceDriver(c.type);
    if (d) keys.add(c.type + d.ownershipKey(inputsOf(d, c.change.after)));
  }
  return keys;
}

/** True when a delete's grant is owned by another change of the plan (so it must not be revoked). */
export function takenOver(c: ResourceChange, owned: ReadonlySet<string>): boolean {
  if (!isDelete(c)) return false;
  const d = resourceDriver(c.type);
  return d !== undefined && c.change.before !== null && owned.has(c.type + d.ownershipKey(inputsOf(d, c.change.before)));
}

function isDelete(c: ResourceChange): boolean {
  return c.change.actions.length === 1 && c.change.actions[0] === "delete";
}
