// protect: true refuses every plan that destroys the resource: a destroy, its removal from the
// stack (orphans.ts), and a replacement, whose old half is a destroy (resource.ts), as
// Terraform's prevent_destroy and Pulumi's protect do. An update in place destroys nothing.
import type { ResourceDecl } from "../config/model.js";
import { error } from "../diagnostics/diagnostic.js";
import type { ResourceChange } from "../generated/schemas.js";
import type { PlanContext } from "./context.js";

/** The error for a protected resource the plan would destroy (`at`: where it is declared). */
export function refuseDestroy(
  ctx: PlanContext,
  address: string,
  how: "destroyed" | "replaced",
  detail: string,
  at: { file?: string; line?: number; column?: number } = {},
): void {
  ctx.diags.push(error(`${address} has protect: true and cannot be ${how}`, { address, detail, ...at }));
}

/** Refuses the replacement of `r`, a protected resource: `why` is --replace, or the inputs whose
 *  change forces it (`type` when the resource's type changed). */
export function refuseReplace(ctx: PlanContext, r: ResourceDecl, why: ResourceChange | "type"): void {
  const src = ctx.stack.source;
  const byRequest = why !== "type" && why.action_reason === "replace_by_request";
  const fields = why === "type" ? "type" : (why.change.replace_paths ?? []).map((p) => p.join(".")).join(" and ");
  const cause = byRequest ? `--replace ${r.name} replaces it` : `changing ${fields} replaces it`;
  const undo = byRequest ? "Drop --replace" : "Revert the change";
  const detail =
    `${cause}: the plan would destroy it, revoking its grant, and create it anew. ${undo}, or remove ` +
    `protect from its options first (protect: false takes effect in the same plan).`;
  refuseDestroy(ctx, r.name, "replaced", detail, {
    file: src.file,
    ...src.position(["resources", r.decl, "options", "protect"]),
  });
}
