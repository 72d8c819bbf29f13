// plan(): refresh (one read per distinct policy, started as soon as the objects are known) →
// evaluate the stack in dependency order (data sources, each resource's decision) → orphans →
// targets → outputs → a serialisable Plan. The only I/O is reads through the CloudPort. Each
// step lives in its own file; this one puts them in order and assembles the result.
import type { AccessDelta, GuardrailPolicy, Plan, Policy, State, StateResource } from "../generated/schemas.js";
import type { StackModel } from "../config/model.js";
import { type Diagnostic, error, hasErrors } from "../diagnostics/diagnostic.js";
import { resourceDriver } from "../drivers/registry.js";
import type { CloudPort } from "../contracts/cloud-port.js";
import { type Emit, noEmit } from "../contracts/events.js";
import { PLAN_FORMAT, PROVIDER_SCHEMA_VERSION, TOOL_VERSION } from "../base/version.js";
import { plannedPolicySizeErrors } from "./policy-size.js";
import { accessDelta, endPolicies, plannedPolicies } from "./access.js";
import { accessLookalikes, confusableGrantWarnings } from "./lookalikes.js";
import { auditRemovalWarnings } from "./audit-removal.js";
import { isNoOp } from "../contracts/actions.js";
import { type PlanContext, type PlanOptions, planContext } from "./context.js";
import { planVariable } from "./data-sources.js";
import { nameReads } from "./name-reads.js";
import { applyMoves, type Moved } from "./moves.js";
import { errorAt } from "../yaml/source.js";
import { withMask } from "../language/sensitive.js";
import { planOrphans } from "./orphans.js";
import { planOutputs } from "./outputs.js";
import { planResource } from "./resource.js";
import { selectTargets } from "./targeting.js";
import { priorStateRecord, stackConfiguration } from "./plan-configuration.js";
import { extended } from "../base/extended.js";
import type { RuleSet } from "../guardrails/rules.js";
import { evaluateRules } from "../guardrails/evaluate.js";

import { withoutCredentials } from "../cloud/endpoint.js";
import { pushAll } from "../base/arrays.js";

export interface PlanResult {
  plan: Plan;
  diagnostics: Diagnostic[];
  /** The prior state with every resource refreshed from the live cloud (for `refresh`). */
  refreshed: StateResource[];
  /** Policies read during refresh, keyed "{kind} {name}": apply starts its writes from them. */
  live: Map<string, Policy>;
  /** The strings of secret values: what is shown or saved of the plan must be scrubbed of them. */
  secrets: ReadonlySet<string>;
}

/** Longest stretch (ms) of planning without letting the event loop handle I/O. */
const YIELD_EVERY_MS = 2;

/** A move onto an address the state already holds (Terraform refuses it too). */
function movedOntoHeld(stack: StackModel, c: Moved["conflicts"][number]): Diagnostic {
  const what =
    `moved${c.move?.i !== undefined ? `[${c.move.i}]` : ""}: ${c.from} cannot be ` +
    `moved to ${c.to}: the state already holds ${c.to}`;
  const detail =
    `Both are in the state, so converge cannot tell which one is the resource. Remove the one that is ` +
    `not with \`converge state rm ADDRESS\` (its grant stays in the cloud), or remove this moved: ` +
    `entry. Nothing was planned.`;
  return c.move?.i !== undefined
    ? errorAt(stack.source, ["moved", c.move.i, "to"], what, { detail, address: c.to })
    : error(what, { detail, address: c.to });
}

export async function plan(
  stack: StackModel,
  prior: State | undefined,
  cloud: CloudPort,
  opts: PlanOptions,
  emit: Emit = noEmit,
): Promise<PlanResult> {
  const moved = applyMoves(prior, stack.moved);
  const ctx = planContext(stack, moved.prior, cloud, opts, emit, moved.previous);
  for (const c of moved.conflicts) ctx.diags.push(movedOntoHeld(stack, c));
  ctx.refresh.readAhead(stack, prior, opts.destroy, opts.readAhead, opts.projectIds);
  const walked = opts.destroy ? 0 : await walk(ctx);
  if (opts.signal?.aborted) ctx.diags.push(interruptedError(walked, stack.order.length));
  else {
    await planOrphans(ctx);
    pushAll(ctx.diags, ctx.refresh.failureDiagnostics(stack));
  }
  markSensitive(ctx);
  const selected = selectTargets(ctx, ctx.changes);
  const outputs = planOutputs(ctx);
  const refreshed = refreshedState(ctx);
  const result = assemble(ctx, selected, outputs, refreshed);
  const live = await ctx.refresh.live();
  if (!result.errored) checkPlannedPolicies(ctx, result, live);
  return { plan: result, diagnostics: ctx.diags, refreshed, live, secrets: ctx.secrets };
}

/** Variables and resources in dependency order. Planning a resource whose policy is already read
 *  awaits nothing, so a long walk would keep the event loop from handling the refresh responses
 *  (and starting the next reads): it yields every few milliseconds. Once the plan's signal aborts
 *  it stops; it returns how many of the stack's variables and resources it went over. */
async function walk(ctx: PlanContext): Promise<number> {
  let yielded = Date.now();
  const reads = nameReads(ctx);
  reads.planned(-1);
  const { signal } = ctx.opts;
  for (const [i, name] of ctx.stack.order.entries()) {
    if (signal?.aborted) return i;
    const v = ctx.stack.variables.get(name);
    if (v) await planVariable(ctx, v);
    const r = ctx.stack.resources.get(name);
    const planning = r && planResource(ctx, r);
    if (planning) await planning;
    // What is read from a resource computed from a secret is secret too.
    const mask = r && ctx.masks.get(r.name);
    if (mask) ctx.values.set(r.name, withMask(ctx.values.get(r.name), derivedMask(mask)));
    reads.planned(i);
    if (Date.now() - yielded >= YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      yielded = Date.now();
    }
  }
  return ctx.stack.order.length;
}

/**
 * The one error of a plan whose signal aborted (Ctrl-C, --timeout, an automation caller's signal):
 * instead of an error for each policy whose read was cancelled (at 100,000 resources, positioning
 * those kept the process busy for most of a minute after Ctrl-C), and of the orphans' reads.
 */
function interruptedError(walked: number, total: number): Diagnostic {
  return error("the plan was interrupted before it was complete", {
    code: "plan/interrupted",
    detail:
      `Planning stopped after ${walked} of the stack's ${total} variables and resources. ` +
      `Nothing was changed; an incomplete plan cannot be applied.`,
  });
}

/** The mask of what is read from a resource whose inputs `mask` marks secret: its `id` is made of
 *  its inputs (name, role, member, condition), and its `project` of its name, so they are too. */
function derivedMask(mask: unknown): unknown {
  if (!mask || typeof mask !== "object") return mask;
  const m = mask as Record<string, unknown>;
  return Object.assign(Object.create(null), m, { id: true }, m.name ? { project: true } : {});
}

/** Terraform's before_sensitive / after_sensitive on the changes of resources computed from secrets. */
function markSensitive(ctx: PlanContext): void {
  for (const c of ctx.changes) {
    const mask = c.mode === "managed" ? ctx.masks.get(c.address) : undefined;
    if (!mask) continue;
    if (c.change.after !== null) c.change.after_sensitive = mask;
    if (c.change.before !== null) c.change.before_sensitive = mask;
  }
}

function assemble(
  ctx: PlanContext,
  selected: Plan["resource_changes"],
  outputs: Plan["output_changes"],
  refreshed: StateResource[],
): Plan {
  const { stack, prior, opts } = ctx;
  const errored = hasErrors(ctx.diags);
  const applyable =
    !errored &&
    (selected.some(
      (c) =>
        !isNoOp(c) ||
        c.change.importing !== undefined ||
        (c.state_only?.length ?? 0) > 0 ||
        c.previous_address !== undefined,
    ) ||
      Object.values(outputs).some((c) => c.action !== "no-op"));
  return {
    format_version: PLAN_FORMAT,
    converge_version: TOOL_VERSION,
    provider_schema_version: PROVIDER_SCHEMA_VERSION,
    timestamp: (opts.now ?? (() => new Date()))().toISOString(),
    stack: { name: stack.name, file: stack.file },
    ...(opts.target ? { target: opts.target } : {}),
    prior_state: priorStateRecord(prior, refreshed),
    provider: {
      // Never the credentials of an http://user:password@… endpoint: plans are shared for review.
      endpoint: withoutCredentials(stack.provider.endpoint),
      ...(stack.provider.project ? { project: stack.provider.project } : {}),
      ...(stack.provider.location ? { location: stack.provider.location } : {}),
      ...(stack.provider.seed ? { seed: stack.provider.seed } : {}),
    },
    options: { refresh: opts.refresh, destroy: opts.destroy, targets: opts.targets, replace: opts.replace },
    applyable,
    errored,
    resource_changes: selected,
    resource_drift: ctx.drift,
    output_changes: outputs,
    variables: ctx.variables,
    configuration: stackConfiguration(stack),
    policies: ctx.refresh.made.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    diagnostics: ctx.diags,
  };
}

/** The access delta, and Google's policy size limit on every policy as the plan leaves it. */
function checkPlannedPolicies(ctx: PlanContext, result: Plan, live: Map<string, Policy>): void {
  const planned = plannedPolicies(result.resource_changes, live, ctx.opts.refresh);
  result.access_changes = accessDelta(planned);
  const lookalikes = accessLookalikes(result.access_changes, planned.policies, ctx.secrets);
  if (lookalikes.length) result.access_changes.lookalikes = lookalikes;
  const confusable = confusableGrantWarnings(ctx.stack, result.access_changes, ctx.opts.strict === true);
  pushAll(ctx.diags, confusable);
  const rules = ctx.opts.guardrails;
  const ends = rules ? endPolicies(planned.policies, live) : [];
  if (rules) result.guardrails = guardrailReport(ctx, rules, result.access_changes, ends);
  pushAll(ctx.diags, auditRemovalWarnings(ctx.stack, result.resource_changes, planned.policies));
  const oversized = plannedPolicySizeErrors(ctx.stack, planned.policies);
  if (hasErrors(confusable)) [result.errored, result.applyable] = [true, false]; // --strict
  if (!oversized.length) return;
  pushAll(ctx.diags, oversized);
  result.errored = true;
  result.applyable = false;
}

/** The guardrail rules on the plan's access changes, each policy as the plan leaves it. */
function guardrailReport(ctx: PlanContext, rules: RuleSet, delta: AccessDelta, after: readonly GuardrailPolicy[]) {
  const now = (ctx.opts.now ?? (() => new Date()))();
  const where = { stack: ctx.stack.name, workspace: ctx.opts.workspace ?? "default", now };
  return evaluateRules(rules, delta, after, where);
}

/** The prior state with every resource as the refresh found it (for `converge refresh`). */
function refreshedState(ctx: PlanContext): StateResource[] {
  const out: StateResource[] = [];
  for (const s of ctx.prior?.resources ?? []) {
    const o = ctx.refresh.observed(s.address);
    const d = resourceDriver(s.type);
    if (!ctx.opts.refresh || !d || !o) out.push(s);
    else if (o.inputs)
      out.push(
        extended(s, {
          inputs: o.inputs as unknown as Record<string, unknown>,
          outputs: o.outputs ?? d.outputs(o.inputs, o.etag),
        }),
      );
  }
  return out;
}
