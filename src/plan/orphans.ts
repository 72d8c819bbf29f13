// State resources the stack no longer declares (every one, when destroying) are deleted, unless
// protected. protect is read from the stack as written when the stack still has the resource (so
// setting or clearing it needs no apply), else from the state.
import { error } from "../diagnostics/diagnostic.js";
import { refuseDestroy } from "./protect.js";
import { resourceDriver } from "../drivers/registry.js";
import type { IamInputs } from "../drivers/types.js";
import type { PlanContext } from "./context.js";
import { deleteChange } from "./change-builders.js";
import { sameInputs } from "./compare.js";

export async function planOrphans(ctx: PlanContext): Promise<void> {
  for (const s of ctx.prior?.resources ?? []) {
    if (ctx.declared.has(s.address)) continue;
    const d = resourceDriver(s.type);
    if (!d) {
      ctx.diags.push(
        error(`${s.address}: state holds unknown type "${s.type}"`, {
          address: s.address,
          detail: "Remove it with `converge state rm`.",
        }),
      );
      continue;
    }
    const o = await ctx.refresh.observe(s, d);
    if (o && (!o.inputs || !sameInputs(d, s.inputs as unknown as IamInputs, o.inputs))) {
      ctx.drift.push({
        ...deleteChange(s, undefined),
        change: {
          action: o.inputs ? "update" : "delete",
          before: s.outputs,
          after: o.inputs ? d.outputs(o.inputs, o.etag) : null,
          after_unknown: {},
          before_sensitive: false,
          after_sensitive: false,
        },
      });
    }
    const declared = ctx.stack.resources.get(s.address);
    if (declared ? declared.options.protect === true : s.protect === true) {
      const detail = ctx.opts.destroy
        ? "Set options.protect: false on it and apply, then destroy."
        : "It is no longer in the stack. Put it back with protect: false and " +
          "apply first, or forget it with `converge state rm`.";
      refuseDestroy(ctx, s.address, "destroyed", detail);
      continue;
    }
    const retain = declared ? declared.options.retainOnDelete === true : s.retainOnDelete === true;
    ctx.changes.push(deleteChange(s, ctx.opts.destroy ? undefined : "delete_because_no_resource_config", retain));
  }
}
