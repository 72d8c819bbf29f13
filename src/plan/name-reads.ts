// Reads of policies whose names are interpolated (`name: ${team}-nightly`), started as soon as
// every value the resource uses is known, not when the walk reaches the resource: the walk
// plans in order and waits for each resource's read, so without this the reads of such
// resources would be made one after the other. Only the reads the resource's own planning
// makes (a create: no state for it, no import) are started; the refresh reads each once.
import { hasInterpolation, containsUnknown } from "../language/expressions.js";
import type { ResourceDecl } from "../config/model.js";
import { resolveValue } from "../language/resolve.js";
import { plain } from "../language/sensitive.js";
import { completeName } from "../cloud/names.js";
import { resourceDriver } from "../drivers/registry.js";
import type { PlanContext } from "./context.js";

export interface NameReads {
  /** The walk has planned the item at this index of the stack's order (-1: before the first). */
  planned(index: number): void;
}

/** Whether planning `r` reads the policy its (desired) name designates: a create does. */
function createsReading(ctx: PlanContext, r: ResourceDecl): boolean {
  const state = ctx.priorByAddress.get(r.name);
  if (state) return !(state.type === r.type && resourceDriver(state.type));
  return r.options.import === undefined;
}

export function nameReads(ctx: PlanContext): NameReads {
  const ready = new Map<number, ResourceDecl[]>();
  if (ctx.opts.refresh && !ctx.opts.destroy) {
    // Made for the first interpolated name: most stacks have none.
    let index: Map<string, number> | undefined;
    for (const r of ctx.stack.resources.values()) {
      const raw = r.properties.name;
      if (typeof raw !== "string" || !hasInterpolation(raw) || !createsReading(ctx, r)) continue;
      index ??= new Map(ctx.stack.order.map((n, i) => [n, i]));
      // After the last of what it depends on is planned (a conservative superset of what its name uses).
      let at = -1;
      for (const d of ctx.stack.graph.dependencies(r.name)) at = Math.max(at, index.get(d) ?? -1);
      const list = ready.get(at);
      if (list) list.push(r);
      else ready.set(at, [r]);
    }
  }
  return {
    planned(i) {
      const list = ready.size ? ready.get(i) : undefined;
      if (list) for (const r of list) startRead(ctx, r);
    },
  };
}

/** Starts the read of `r`'s policy when its name resolves to a complete one (else the walk reports why). */
function startRead(ctx: PlanContext, r: ResourceDecl): void {
  const name = plain(
    resolveValue(r.properties.name, ["resources", r.decl, "properties", "name"], ctx.scope, ctx.stack.source, []),
  );
  if (typeof name !== "string" || containsUnknown(name)) return;
  const named = completeName(r.driver.kind, name, ctx.defaults);
  if (typeof named !== "string") void ctx.refresh.read(r.driver.kind, named.full);
}
