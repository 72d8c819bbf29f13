// The one notion of an action: a plan stores one `Action` per change (schemas/plan.schema.json);
// Terraform's `actions[]` pairs exist only in Terraform's plan JSON (../plan/terraform-json.ts).
// Everything that renders, counts or executes a change asks here what it stands for.
import type { Action, Plan, ResourceChange, TfAction } from "../generated/schemas.js";

export type { Action };

/** What a change stands for where an import is its own kind of step: the stored action, with an
 *  import shown as one ("import", or "import-update" when the import also changes the policy). */
export type ShownAction = Action | "import" | "import-update";

export function displayAction(c: ResourceChange): ShownAction {
  const a = c.change.action;
  if (c.change.importing) return a === "update" ? "import-update" : "import";
  return a;
}

export function isNoOp(c: ResourceChange): boolean {
  return c.change.action === "no-op";
}

/** Terraform's `actions[]` for an action: a replacement creates first, then deletes. */
export function terraformActions(a: Action): [TfAction] | [TfAction, TfAction] {
  return a === "replace" ? ["create", "delete"] : [a];
}

export function planCounts(p: Plan): { import: number; add: number; change: number; destroy: number } {
  const n = { import: 0, add: 0, change: 0, destroy: 0 };
  for (const c of p.resource_changes) {
    if (c.mode !== "managed") continue;
    switch (displayAction(c)) {
      case "create":
        n.add++;
        break;
      case "update":
        n.change++;
        break;
      case "replace":
        n.add++;
        n.destroy++;
        break;
      case "delete":
        n.destroy++;
        break;
      case "import":
        n.import++;
        break;
      case "import-update":
        n.import++;
        n.change++;
        break;
      default:
    }
  }
  return n;
}
