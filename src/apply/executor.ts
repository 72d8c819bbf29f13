// apply(): walks the plan's change graph (graph.ts) with the scheduler (scheduler.ts): the changes
// that touch one policy are written in one read-modify-write, after the policies they depend on
// (policy-graph.ts; work.ts says what each node writes and records); the state is saved, coalesced and atomic, as steps
// complete
// (state-recorder.ts); a failure stops only what depends on it; an abort starts no new write, lets
// the calls in flight finish and saves. Outputs are computed last, from everything now known.
import pLimit from "p-limit";
import type { Plan, Policy, State } from "../generated/schemas.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { containsUnknown } from "../language/expressions.js";
import { resolveValue, type Scope, valuesScope } from "../language/resolve.js";
import { plain } from "../language/sensitive.js";
import type { CloudPort } from "../contracts/cloud-port.js";
import { type Emit, noEmit } from "../contracts/events.js";
import { HeldGrants } from "../plan/ownership.js";
import { changeGraph, type Node } from "./graph.js";
import { Scheduler, type WriteTicket } from "./scheduler.js";
import { IntentLog, type IntentStore } from "./intents.js";
import type { Work } from "./work.js";
import { StateRecorder } from "./state-recorder.js";
import { stateView } from "./state-view.js";
import { prepareNode, type WorkContext } from "./work.js";
import type { ResourceClaim } from "../claims/claims.js";
import { pushAll } from "../base/arrays.js";
import { type DeferredRunner, settleDeferredOutputs } from "./deferred-outputs.js";

export interface ApplyContext {
  cloud: CloudPort;
  /** State before apply (undefined: none yet) */
  state: State;
  /** Persists the state atomically; returns the written state (serial bumped) */
  save: (state: State) => Promise<State>;
  parallelism: number;
  emit?: Emit;
  signal?: AbortSignal;
  /** Policies already read during plan ("{kind} {name}"): writes start from them */
  live?: Map<string, Policy>;
  /** Records what a resource whose values were unknown at plan time claims, before its write;
   *  throws a UserError when another stack or workspace claims it (the resource then fails). */
  claim?: (claims: ResourceClaim[]) => Promise<void>;
  /** Where each write's intent is recorded before it is sent (./intents.ts); none: no intents. */
  intents?: IntentStore;
  /** The digest of the plan, recorded with each intent, when known. */
  planDigest?: () => string | undefined;
  /** Runs a program's `.apply` function kept for apply (./deferred-outputs.ts). */
  runDeferred?: DeferredRunner;
}

export interface ApplyResult {
  state: State;
  failed: { address: string; diagnostic: Diagnostic }[];
  skipped: string[];
  interrupted: boolean;
}

export async function apply(plan: Plan, ctx: ApplyContext): Promise<ApplyResult> {
  const emit = ctx.emit ?? noEmit;
  const limit = pLimit(Math.max(1, ctx.parallelism));
  const values = knownValues(plan, ctx.state);
  const recorder = new StateRecorder(ctx.state, ctx.save, emit, (r) => values.set(r.address, r.outputs));
  // Renames from `moved:` come first: they call nothing, and every step records the new address.
  recorder.renameAll(
    new Map(
      plan.resource_changes.flatMap((c) => (c.previous_address ? [[c.previous_address, c.address] as const] : [])),
    ),
  );
  const result: ApplyResult = { state: recorder.state, failed: [], skipped: [], interrupted: false };
  const scope: Scope = valuesScope(values);
  const fail = (n: Node, summary: string, detail?: string) => {
    n.status = "failed";
    const d = error(`${n.change.address}: ${summary}`, { address: n.change.address, ...(detail ? { detail } : {}) });
    result.failed.push({ address: n.change.address, diagnostic: d });
    emit({
      type: "step",
      address: n.change.address,
      action: n.action,
      phase: "error",
      error: d,
      ...(n.change.policy ? { policy: n.change.policy } : {}),
    });
  };
  const work: WorkContext = {
    cloud: ctx.cloud,
    limit,
    emit,
    scope,
    values,
    defaults: { project: plan.provider.project, location: plan.provider.location },
    // Grants the plan keeps or creates: no revoke of this apply removes them.
    held: HeldGrants.of(plan.resource_changes),
    recorder,
    fail,
    ...(ctx.claim ? { claim: ctx.claim } : {}),
  };
  const intents = ctx.intents ? writeTickets(new IntentLog(ctx.intents, ctx.planDigest), recorder) : undefined;
  if (intents) work.movedRecorded = intents.movedRecorded;
  const outcome = await new Scheduler({
    nodes: changeGraph(plan.resource_changes),
    cloud: ctx.cloud,
    limit,
    emit,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.live ? { live: ctx.live } : {}),
    planned: stateView(ctx.state),
    prepare: (n, started) => prepareNode(work, n, started),
    fail,
    afterWrite: () => void recorder.save().catch(() => {}),
    beforeFirstWrite: () => recorder.warm(),
    ...(intents ? { beforeWrite: intents.beforeWrite } : {}),
  }).run();
  pushAll(result.skipped, outcome.skipped);
  result.interrupted = outcome.interrupted;
  if (!outcome.interrupted && !plan.options.targets.length) {
    const diags: Diagnostic[] = [];
    const config = await settleDeferredOutputs(plan.configuration?.outputs, scope, ctx.runDeferred, diags);
    for (const d of diags) result.failed.push({ address: d.address ?? "outputs", diagnostic: d });
    recorder.setOutputs(outputsNow(plan, config, scope, recorder.state), sensitiveOutputs(plan));
  }
  await recorder.flush();
  await intents?.log.flush();
  return result;
}

/** Each write's intent, and when it is settled: once a save holds what its write recorded (for
 *  the grant of a replacement onto another object: once the resource is recorded, after the
 *  revoke on the old object), or at once when it did not land. An uncertain failure leaves it
 *  pending, for the next plan to settle. */
function writeTickets(log: IntentLog, recorder: StateRecorder) {
  // Intents waiting for the replacements onto another object whose grant they wrote.
  const waiting = new Map<string, Set<Node>>();
  const movedRecorded = (n: Node) => {
    for (const [id, nodes] of waiting) {
      if (!nodes.delete(n) || nodes.size) continue;
      waiting.delete(id);
      recorder.cover(id);
    }
  };
  const beforeWrite = async (kind: string, policy: string, group: Work[]): Promise<WriteTicket> => {
    const id = await log.begin(
      kind,
      policy,
      group.map((w) => w.intent),
    );
    return {
      recorded: () => {
        const moving = new Set(group.filter((w) => w.intent.first_of_two).map((w) => w.node));
        if (moving.size) waiting.set(id, moving);
        else recorder.cover(id);
      },
      failed: (uncertain) => {
        if (!uncertain) log.clear([id]);
      },
    };
  };
  recorder.whenCovered((ids) => log.clear(ids));
  return { log, beforeWrite, movedRecorded };
}

/** The values apply starts from: the plan's variables, the state's outputs, the planned values. */
function knownValues(plan: Plan, state: State): Map<string, unknown> {
  const values = new Map<string, unknown>(Object.entries(plan.variables ?? {}));
  for (const r of state.resources) values.set(r.address, r.outputs);
  for (const c of plan.resource_changes)
    if (c.mode === "managed" && c.change.after && !c.config) values.set(c.address, c.change.after);
  return values;
}

/** The outputs the plan marks as computed from a secret. */
function sensitiveOutputs(plan: Plan): string[] {
  return Object.entries(plan.output_changes)
    .filter(([, c]) => c.after_sensitive === true)
    .map(([name]) => name);
}

/** Outputs, computed when everything they need is known; an output still unknown keeps its value. */
function outputsNow(
  plan: Plan,
  config: Record<string, unknown> | undefined,
  scope: Scope,
  state: State,
): Record<string, unknown> {
  const outputs: Record<string, unknown> = Object.create(null); // any name, __proto__ too
  for (const [name, oc] of Object.entries(plan.output_changes)) {
    if (oc.action === "delete") continue;
    const raw = config && Object.hasOwn(config, name) ? config[name] : undefined;
    const diags: Diagnostic[] = [];
    const v = raw === undefined ? oc.after : resolveValue(raw, ["outputs", name], scope, undefined, diags);
    // The value, not its secret wrapper (an fn::secret output: the plan marks it sensitive).
    if (!diags.length && !containsUnknown(v)) outputs[name] = plain(v);
    else if (Object.hasOwn(state.outputs, name)) outputs[name] = state.outputs[name];
  }
  return outputs;
}
