// --target and --replace: addresses must exist; targeting keeps the targeted changes and what
// they depend on, and says, as Terraform does, that the plan may not be complete.
import type { ResourceChange } from "../generated/schemas.js";
import { error, warning } from "../diagnostics/diagnostic.js";
import type { PlanContext } from "./context.js";
import { listed, NAMES_IN_DETAIL } from "../diagnostics/listed.js";

const TARGETING =
  "You are creating a plan with --target, which means that the result of this plan may not represent all of " +
  "the changes requested by the current stack. --target is not for routine use: it is for exceptional " +
  "situations such as recovering from errors or mistakes, or when converge suggests it in an error message.";

export function selectTargets(ctx: PlanContext, changes: ResourceChange[]): ResourceChange[] {
  const { stack, opts } = ctx;
  for (const r of opts.replace) {
    if (!stack.resources.has(r) && !ctx.priorByAddress.has(r))
      ctx.diags.push(
        error(`--replace ${r}: no resource has this address`, {
          detail: `Resources: ${listed([...stack.resources.keys()], NAMES_IN_DETAIL) || "(none)"}.`,
        }),
      );
  }
  if (!opts.targets.length) return changes;
  ctx.diags.push(warning("Resource targeting is in effect", { detail: TARGETING }));
  const keep = new Set<string>();
  for (const t of opts.targets) {
    if (!stack.graph.has(t) && !ctx.priorByAddress.has(t))
      ctx.diags.push(error(`--target ${t}: no resource or variable has this address`));
    keep.add(t);
    if (stack.graph.has(t)) for (const a of stack.graph.ancestors(t)) keep.add(a);
  }
  return changes.filter((c) => keep.has(c.address));
}
