// What a change's heading says of who owns its grants: adopted grants stay where they were, a
// binding created over existing members takes them over.
import type { ResourceChange } from "../../generated/schemas.js";
import type { ShownAction } from "../../contracts/actions.js";
import { listed } from "../../diagnostics/listed.js";

/** Notes on ownership under a change's heading: grants converge adopted stay where they were. */
export function ownershipNotes(c: ResourceChange, action: ShownAction): string[] {
  const notes: string[] = [];
  if (c.after_adopted && (action === "create" || action === "replace"))
    notes.push("already granted outside converge: converge will adopt it");
  const taken = c.after_taken_over ?? [];
  if (taken.length && action === "create") {
    const them = taken.length === 1 ? "it" : "them";
    notes.push(`takes over ${listed(taken, 5)}, already granted outside converge: destroy will revoke ${them}`);
  }
  if (c.before_adopted && action === "delete")
    notes.push("granted outside converge before it was adopted: the grant stays in place");
  if (c.before_adopted && action === "replace")
    notes.push("the old grant was granted outside converge before it was adopted: it stays in place");
  return notes;
}
