// The stack's outputs: each resolved now (unknown parts known after apply) and compared with the
// state's; outputs the stack no longer has (every one, when destroying) are deleted.
import type { Plan, ResourceChange } from "../generated/schemas.js";
import { containsUnknown, stripUnknown, unknownMask } from "../language/expressions.js";
import { resolveValue } from "../language/resolve.js";
import { containsSensitive, plain, secretStrings } from "../language/sensitive.js";
import type { PlanContext } from "./context.js";
import { jsonEqual } from "./compare.js";

export function planOutputs(ctx: PlanContext): Plan["output_changes"] {
  const { stack, prior, opts } = ctx;
  const out: Plan["output_changes"] = Object.create(null); // any name, __proto__ too
  if (!opts.destroy && !opts.targets.length) {
    for (const o of stack.outputs.values()) {
      const resolved = resolveValue(o.value, ["outputs", o.name], ctx.scope, stack.source, ctx.diags);
      const secret = containsSensitive(resolved);
      secretStrings(resolved, ctx.secrets);
      const value = plain(resolved);
      const before = prior?.outputs[o.name];
      const exists = prior !== undefined && Object.hasOwn(prior.outputs, o.name);
      const action: ResourceChange["change"]["action"] = !exists
        ? "create"
        : containsUnknown(value) || !jsonEqual(before, value)
          ? "update"
          : "no-op";
      out[o.name] = {
        action,
        before: exists ? before : null,
        after: stripUnknown(value),
        after_unknown: unknownMask(value),
        before_sensitive: secret && exists,
        after_sensitive: secret,
      };
    }
  }
  for (const [name, before] of Object.entries(prior?.outputs ?? {})) {
    if (opts.destroy || !stack.outputs.has(name))
      out[name] = {
        action: "delete",
        before,
        after: null,
        after_unknown: false,
        before_sensitive: false,
        after_sensitive: false,
      };
  }
  return out;
}
