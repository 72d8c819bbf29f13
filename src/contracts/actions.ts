// The one internal notion of an action: what a change stands for, for rendering, counting and
// executing. Terraform's `actions[]` pairs are the plan data's spelling; everything that needs
// "the action" of a change asks here.
import type { Plan, ResourceChange } from "../generated/schemas.js";

/** The single action a change stands for. */
export type Action = "create" | "update" | "replace" | "delete" | "read" | "import" | "import-update" | "no-op";

export function displayAction(c: ResourceChange): Action {
  const a = c.change.actions;
  if (c.change.importing) return a[0] === "update" ? "import-update" : "import";
  if (a.length === 2) return "replace";
  return a[0] as Action;
}

export function isNoOp(c: ResourceChange): boolean {
  return c.change.actions.length === 1 && c.change.actions[0] === "no-op";
}

export function planCounts(p: Plan): { import: number; add: number; change: number; destroy: number } {
  const n = { import: 0, add: 0, change: 0, destroy: 0 };
  for (const c of p.resource_changes) {
    if (c.mode !== "managed") continue;
    switch (displayAction(c)) {
      case "create": n.add++; break;
      case "update": n.change++; break;
      case "replace": n.add++; n.destroy++; break;
      case "delete": n.destroy++; break;
      case "import": n.import++; break;
      case "import-update": n.import++; n.change++; break;
      default:
    }
  }
  return n;
}
