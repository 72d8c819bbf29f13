// apply(): walks the plan's change graph with bounded parallelism. Ready changes that touch the
// same policy are merged into one read-modify-write; state is saved (coalesced, atomic) after
// steps complete; a failure stops only what depends on it; an abort stops scheduling, starts no
// queued write (nor a retry, nor the write of a read-modify-write whose read is done), lets the
// calls in flight finish and saves.
import pLimit from "p-limit";
import type { Plan, Policy, ResourceChange, State, StateResource } from "../generated/schemas.js";
import { functionDriver, resourceDriver } from "../drivers/registry.js";
import type { IamInputs } from "../drivers/types.js";
import { inputsOf } from "../drivers/inputs.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { containsUnknown, stripUnknown } from "../config/expressions.js";
import { resolveValue, type Scope } from "../config/resolve.js";
import type { PolicyModification } from "../iam/policy.js";
import { type CloudPort, INTERRUPTED, type PolicyKind, statusOf } from "../engine/cloud-port.js";
import { type Emit, noEmit, type StepAction } from "../engine/events.js";
import { displayAction } from "../plan/planner.js";
import { parsedState, sealResource, serializeState, stateProblems } from "../state/format.js";
import { HeldGrants } from "../plan/ownership.js";
import { jsonEqual } from "../plan/compare.js";

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
  /**
   * false: one read-modify-write per changed resource, serialised per policy (the per-resource
   * approach of Terraform's Google provider), kept for comparison.
   */
  iamBatching?: boolean;
}

export interface ApplyResult {
  state: State;
  failed: { address: string; diagnostic: Diagnostic }[];
  skipped: string[];
  counts: { added: number; changed: number; destroyed: number; imported: number; read: number };
  interrupted: boolean;
}

interface Node {
  change: ResourceChange;
  action: StepAction;
  deps: Set<string>;
  status: "pending" | "running" | "done" | "failed" | "skipped";
}

type Obj = Record<string, unknown>;

/** A save slower than this (ms) delays the next one by SAVE_PAUSE_FACTOR times its duration. */
const SLOW_SAVE_MS = 20;
const SAVE_PAUSE_FACTOR = 20;

function stepAction(c: ResourceChange): StepAction {
  const a = displayAction(c);
  return a === "import-update" ? "import" : a;
}

/** One unit of policy work: a change's modifications on one policy. */
interface Work {
  node: Node;
  kind: PolicyKind;
  policy: string;
  mods: PolicyModification[];
  /** After this work: what to record */
  finish: (p: Policy | undefined) => void;
}

export async function apply(plan: Plan, ctx: ApplyContext): Promise<ApplyResult> {
  const emit = ctx.emit ?? noEmit;
  const limit = pLimit(Math.max(1, ctx.parallelism));
  const state: State = structuredClone(ctx.state);
  const result: ApplyResult = { state, failed: [], skipped: [], counts: { added: 0, changed: 0, destroyed: 0, imported: 0, read: 0 }, interrupted: false };

  // --- evaluation scope for values known only now ------------------------------------------
  const values = new Map<string, unknown>(Object.entries(plan.variables ?? {}));
  for (const r of state.resources) values.set(r.address, r.outputs);
  for (const c of plan.resource_changes) if (c.mode === "managed" && c.change.after && !c.config) values.set(c.address, c.change.after);
  const scope: Scope = (root) => (values.has(root) ? { value: values.get(root) } : undefined);

  // Grants the plan keeps or creates: no revoke of this apply removes them.
  const held = HeldGrants.of(plan.resource_changes);

  // --- graph ---------------------------------------------------------------------------------
  const nodes = new Map<string, Node>();
  const key = (c: ResourceChange) => `${c.address}\u0000${c.change.actions.join(",")}\u0000${c.type}`;
  for (const c of plan.resource_changes) nodes.set(key(c), { change: c, action: stepAction(c), deps: new Set(), status: "pending" });
  const byAddress = new Map<string, Node[]>();
  for (const n of nodes.values()) {
    const same = byAddress.get(n.change.address);
    if (same) same.push(n);
    else byAddress.set(n.change.address, [n]);
  }
  const isDelete = (n: Node) => n.action === "delete";
  for (const n of nodes.values()) {
    if (isDelete(n)) {
      // Deletes run in reverse: the deletes of what n depends on wait for n (found by address:
      // scanning every node per delete was quadratic).
      for (const d of n.change.dependencies ?? []) for (const dn of byAddress.get(d) ?? []) if (dn !== n && isDelete(dn)) dn.deps.add(key(n.change));
      // A type change at one address: the new resource is created before the old is removed.
      for (const other of byAddress.get(n.change.address) ?? []) if (other !== n) n.deps.add(key(other.change));
    } else {
      for (const d of n.change.dependencies ?? []) for (const dn of byAddress.get(d) ?? []) if (!isDelete(dn)) n.deps.add(key(dn.change));
    }
  }

  // --- state bookkeeping (coalesced saves) ---------------------------------------------------
  // address -> index of its first entry in state.resources (a linear search per step is
  // quadratic in the state's size); rebuilt lazily after a removal.
  let indexOf: Map<string, number> | undefined;
  const findResource = (address: string): number => {
    if (!indexOf) {
      indexOf = new Map();
      state.resources.forEach((x, i) => {
        if (!indexOf!.has(x.address)) indexOf!.set(x.address, i);
      });
    }
    return indexOf.get(address) ?? -1;
  };
  // Saves happen only when the state changed: a failed apply that changed nothing must leave the
  // state file (and its .backup) as they were, and saved plans valid.
  let version = 0;
  let savedVersion = 0;
  const setResource = (r: StateResource) => {
    const i = findResource(r.address);
    values.set(r.address, r.outputs);
    if (i >= 0 && jsonEqual(state.resources[i], r)) return;
    version++;
    if (i >= 0) state.resources[i] = r;
    else indexOf!.set(r.address, state.resources.push(r) - 1);
  };
  const removeResource = (address: string, type: string) => {
    version++;
    state.resources = state.resources.filter((x) => !(x.address === address && x.type === type));
    indexOf = undefined;
  };
  // A deep copy of the state for each save, as structuredClone(state) would make, but cloning each
  // resource once: resources are replaced, never changed in place, so their copies can be reused
  // (cloning 10,000 resources on every save was a hot spot).
  const copies = new WeakMap<StateResource, StateResource>();
  const copyOf = (r: StateResource): StateResource => {
    let c = copies.get(r);
    if (!c) {
      // Sealed (frozen): never changed, so the store can reuse its serialisation across saves.
      c = sealResource(structuredClone(r));
      copies.set(r, c);
    }
    return c;
  };
  const snapshot = (): State => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(state)) out[k] = k === "resources" && Array.isArray(v) ? (v as StateResource[]).map(copyOf) : structuredClone(v);
    return out as unknown as State;
  };
  let saving: Promise<void> | undefined;
  // Saves are coalesced: one at a time, and the next one covers every step done meanwhile. A
  // slow save (a large state: serialising and validating it blocks the event loop for a while)
  // makes the next one wait a few times as long, so that back-to-back saves cannot starve the
  // cloud calls; saves that take less than SLOW_SAVE_MS are never delayed, nor is the final one.
  let last = { ms: 0, end: 0 };
  let hurry: (() => void) | undefined;
  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        hurry = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      hurry = done;
    });
  const save = (final = false): Promise<void> => {
    if (saving) return saving.then(() => (version !== savedVersion ? save(final) : undefined));
    if (version === savedVersion) return Promise.resolve();
    const write = () => {
      const v = version;
      const t0 = Date.now();
      return ctx.save(snapshot()).then((written) => {
        savedVersion = v;
        last = { ms: Date.now() - t0, end: Date.now() };
        return written;
      });
    };
    const wait = final || last.ms < SLOW_SAVE_MS ? 0 : last.end + SAVE_PAUSE_FACTOR * last.ms - Date.now();
    saving = (wait > 0 ? delay(wait).then(write) : write()).then(
      (written) => {
        state.serial = written.serial;
        state.lineage = written.lineage;
        emit({ type: "state-saved", serial: written.serial });
        saving = undefined;
      },
      (e) => {
        saving = undefined;
        throw e;
      },
    );
    return saving;
  };

  const fail = (n: Node, summary: string, detail?: string) => {
    n.status = "failed";
    const d = error(`${n.change.address}: ${summary}`, { address: n.change.address, ...(detail ? { detail } : {}) });
    result.failed.push({ address: n.change.address, diagnostic: d });
    emit({ type: "step", address: n.change.address, action: n.action, phase: "error", error: d, ...(n.change.policy ? { policy: n.change.policy } : {}) });
  };

  const diagsText = (diags: Diagnostic[]) => diags.map((d) => d.summary).join("; ");
  const defaults = { project: plan.provider.project, location: plan.provider.location };

  // Prepares a node: resolves deferred values and returns its policy work (or finishes it).
  const prepare = async (n: Node, started: number): Promise<Work[]> => {
    const c = n.change;
    if (c.mode === "data") {
      const cfg = (c.config ?? {}) as { function?: string; arguments?: unknown };
      const fn = functionDriver(String(cfg.function ?? c.type));
      const diags: Diagnostic[] = [];
      const args = resolveValue(cfg.arguments, ["variables", c.address, "fn::invoke", "arguments"], scope, undefined, diags) as Obj;
      if (!fn || diags.length || containsUnknown(args)) {
        fail(n, "cannot evaluate the function arguments", diagsText(diags) || "a value it depends on is still unknown");
        return [];
      }
      const named = fn.objectName(args, defaults);
      if ("problem" in named) {
        fail(n, named.problem.message);
        return [];
      }
      emit({ type: "read", address: c.address, token: fn.token, object: named.name, phase: "start" });
      try {
        const res = fn.toResult(await limit(() => ctx.cloud.getFederation(named.name)));
        values.set(c.address, res);
        emit({ type: "read", address: c.address, token: fn.token, object: named.name, phase: "done", ms: Date.now() - started });
        n.status = "done";
        result.counts.read++;
      } catch (e) {
        fail(n, `cannot read ${named.name}`, (e as Error).message);
      }
      return [];
    }
    const d = resourceDriver(c.type);
    if (!d) {
      fail(n, `unknown type ${c.type}`);
      return [];
    }
    const prior = c.change.before ? inputsOf(d, c.change.before) : undefined;
    let desired = c.change.after ? inputsOf(d, c.change.after) : undefined;
    if (c.config && n.action !== "delete") {
      const diags: Diagnostic[] = [];
      const raw = resolveValue((c.config as Obj).properties, ["resources", c.address, "properties"], scope, undefined, diags) as Obj;
      if (diags.length || containsUnknown(raw)) {
        fail(n, "cannot evaluate its properties", diagsText(diags) || "a value it depends on is still unknown");
        return [];
      }
      const norm = d.normalize(raw, defaults);
      if (norm.problems.length) {
        fail(n, norm.problems.map((p) => p.message).join("; "));
        return [];
      }
      desired = norm.inputs;
      held.hold(d.claims(desired));
    }
    const record = (inputs: IamInputs, p: Policy | undefined) =>
      setResource({
        address: c.address,
        type: c.type,
        id: d.id(inputs),
        inputs: stripUnknown(inputs) as Obj,
        outputs: d.outputs(inputs, p?.etag ?? ""),
        dependencies: c.dependencies ?? [],
        ...(c.protect ? { protect: true } : {}),
        ...(c.after_adopted ? { adopted: true } : {}),
      });
    // What revoking the prior grant takes away: nothing of a grant converge adopted (it was there
    // before converge), nothing another resource of this plan holds.
    const revoke = (from: IamInputs) => (c.before_adopted ? [] : held.guard(d.kind, from.name, d.modifications(from, undefined)));
    const count = () => {
      if (n.action === "create") result.counts.added++;
      else if (n.action === "update") result.counts.changed++;
      else if (n.action === "delete") result.counts.destroyed++;
      else if (n.action === "replace") {
        result.counts.added++;
        result.counts.destroyed++;
      } else if (n.action === "import") {
        result.counts.imported++;
        if (c.change.actions[0] === "update") result.counts.changed++;
      }
    };
    if (n.action === "no-op" || (n.action === "import" && c.change.actions[0] === "no-op")) {
      if (desired) record(desired, { etag: String(((c.change.before ?? {}) as Obj).etag ?? "") });
      count();
      n.status = "done";
      return [];
    }
    if (n.action === "delete") {
      const mods = revoke(prior!);
      const forget = () => { removeResource(c.address, c.type); count(); };
      if (mods.length === 0) {
        // Adopted, or other resources of this plan hold every grant it had: forget it, revoke nothing.
        forget();
        n.status = "done";
        return [];
      }
      return [{ node: n, kind: d.kind, policy: prior!.name, mods, finish: forget }];
    }
    const target = desired!;
    if (prior && n.action === "replace" && prior.name !== target.name) {
      // Different objects: grant on the new one first, then revoke on the old one. The state keeps
      // the old grant until its revoke is done: if apply stops in between (Ctrl-C, a kill, a
      // refused revoke), the next plan sees the old grant and replaces again; recording the new
      // one first would forget a grant that is still live.
      let granted: Policy | undefined;
      return [
        { node: n, kind: d.kind, policy: target.name, mods: d.modifications(undefined, target), finish: (p) => { granted = p; } },
        { node: n, kind: d.kind, policy: prior.name, mods: revoke(prior), finish: () => { record(target, granted); count(); } },
      ];
    }
    // A replacement on one object revokes the old grant and makes the new one in one write.
    const grant = d.modifications(n.action === "create" || n.action === "replace" ? undefined : prior, target);
    const mods = n.action === "replace" && prior ? [...revoke(prior), ...grant] : held.guard(d.kind, target.name, grant);
    return [{ node: n, kind: d.kind, policy: target.name, mods, finish: (p) => { record(target, p); count(); } }];
  };

  // --- scheduler -------------------------------------------------------------------------------
  const inflight = new Set<Promise<void>>();
  const busyPolicies = new Set<string>();
  // Prepared work waiting for its policy: per policy in arrival order, `seq` numbering arrivals
  // (a single array scanned at every wake-up was quadratic with one work per resource).
  const queued = new Map<string, { seq: number; w: Work }[]>();
  let queuedCount = 0;
  let arrivals = 0;
  const enqueue = (w: Work) => {
    const k = `${w.kind} ${w.policy}`;
    // Nothing left to change on this policy (every revoke is held by another resource).
    if (w.mods.length === 0) return complete(w, ctx.live?.get(k));
    let q = queued.get(k);
    if (!q) queued.set(k, (q = []));
    q.push({ seq: arrivals++, w });
    queuedCount++;
  };
  const remainingWork = new Map<Node, number>();
  const startedAt = new Map<Node, number>();

  const ready = (n: Node) => n.status === "pending" && [...n.deps].every((k) => nodes.get(k)!.status === "done");
  const blocked = (n: Node) => [...n.deps].some((k) => ["failed", "skipped"].includes(nodes.get(k)!.status));

  const runGroup = async (kind: PolicyKind, policy: string, group: Work[]) => {
    const t0 = Date.now();
    emit({ type: "policy-write", policy, phase: "start" });
    const deleteOnly = group.every((w) => w.node.action === "delete");
    try {
      const initial = ctx.iamBatching === false ? undefined : ctx.live?.get(`${kind} ${policy}`);
      // Queued behind the parallelism limit: after an abort, it does not start at all.
      const out = await limit(() => (ctx.signal?.aborted ? undefined : ctx.cloud.modifyPolicy(kind, policy, group.flatMap((w) => w.mods), initial, ctx.signal)));
      if (!out) return notStarted(policy, t0);
      ctx.live?.set(`${kind} ${policy}`, out.policy);
      emit({ type: "policy-write", policy, phase: "done", attempts: out.attempts, written: out.written, ms: Date.now() - t0 });
      for (const w of group) complete(w, out.policy);
    } catch (e) {
      const status = statusOf(e);
      // Stopped by the abort before anything was written: its nodes stay running, reported as
      // interrupted at the end, and the state keeps what it had for them.
      if (status === INTERRUPTED && ctx.signal?.aborted) return notStarted(policy, t0);
      emit({ type: "policy-write", policy, phase: "error", ms: Date.now() - t0 });
      if (status === "NOT_FOUND" && deleteOnly) {
        // The object is gone, so is every grant on it: deleting is done.
        for (const w of group) complete(w, undefined);
        return;
      }
      if (group.length > 1 && (status === "INVALID_ARGUMENT" || status === "FAILED_PRECONDITION")) {
        // One bad change must not sink its neighbours: retry each change on its own.
        for (const w of group) await runGroup(kind, policy, [w]);
        return;
      }
      const what = status === "NOT_FOUND" ? `${kind === "restorePlan" ? "restore plan" : "endpoint"} ${policy} does not exist` : `cannot update the IAM policy of ${policy}`;
      for (const w of group) if (w.node.status === "running") fail(w.node, what, (e as Error).message);
    }
  };

  const notStarted = (policy: string, t0: number) => emit({ type: "policy-write", policy, phase: "interrupted", ms: Date.now() - t0 });

  const complete = (w: Work, p: Policy | undefined) => {
    const n = w.node;
    if (n.status !== "running") return;
    w.finish(p);
    const left = (remainingWork.get(n) ?? 1) - 1;
    remainingWork.set(n, left);
    if (left === 0) {
      n.status = "done";
      emit({ type: "step", address: n.change.address, action: n.action, phase: "done", ms: Date.now() - (startedAt.get(n) ?? Date.now()), ...(n.change.policy ? { policy: n.change.policy } : {}) });
    } else {
      // Next piece of a cross-object replacement.
      const next = pendingPieces.get(n)?.shift();
      if (next) enqueue(next);
    }
  };
  const pendingPieces = new Map<Node, Work[]>();

  let wake: () => void = () => {};
  ctx.signal?.addEventListener("abort", () => wake(), { once: true });
  const track = (p: Promise<void>) => {
    const t = p.finally(() => {
      inflight.delete(t);
      void save().catch(() => {});
      wake();
    });
    inflight.add(t);
  };

  // The nodes still pending, in graph order: a node never becomes pending again, so the scans
  // below need not visit the others (scanning every node at each wake-up was quadratic).
  let pendingNodes = [...nodes.values()];
  let warmed = false;
  for (;;) {
    pendingNodes = pendingNodes.filter((n) => n.status === "pending");
    // Skip what can no longer run, transitively (repeat until nothing changes).
    for (let changed = true; changed; ) {
      changed = false;
      for (const n of pendingNodes) {
        if (n.status === "pending" && blocked(n)) {
          n.status = "skipped";
          changed = true;
          result.skipped.push(n.change.address);
          emit({ type: "step", address: n.change.address, action: n.action, phase: "skipped" });
        }
      }
    }
    if (ctx.signal?.aborted) result.interrupted = true;
    if (!result.interrupted) {
      for (const n of pendingNodes) {
        if (!ready(n)) continue;
        n.status = "running";
        const t0 = Date.now();
        startedAt.set(n, t0);
        emit({ type: "step", address: n.change.address, action: n.action, phase: "start", ...(n.change.policy ? { policy: n.change.policy } : {}) });
        const works = await prepare(n, t0);
        if ((n.status as Node["status"]) === "done") emit({ type: "step", address: n.change.address, action: n.action, phase: "done", ms: Date.now() - t0 });
        if (n.status !== "running") continue;
        remainingWork.set(n, works.length);
        if (works.length === 0) {
          n.status = "done";
          continue;
        }
        enqueue(works[0]!);
        if (works.length > 1) pendingPieces.set(n, works.slice(1));
      }
      if (queuedCount > 0 && !warmed) {
        // Before the first cloud call: copy, serialise and check the resources the first save
        // will hold (with a large prior state, doing it in that save held up the calls in flight).
        warmed = true;
        const snap = snapshot();
        serializeState(snap);
        stateProblems(snap);
        parsedState(snap);
      }
      // Dispatch: one read-modify-write per policy, merging everything queued for it.
      // Every policy that is not busy gets a group: all its queued work (batching), or the first
      // (per resource); groups in the order their first work arrived.
      const heads: { seq: number; k: string }[] = [];
      for (const [k, q] of queued) if (!busyPolicies.has(k)) heads.push({ seq: q[0]!.seq, k });
      heads.sort((a, b) => a.seq - b.seq);
      const groups = new Map<string, Work[]>();
      for (const { k } of heads) {
        const q = queued.get(k)!;
        const taken = ctx.iamBatching === false ? q.splice(0, 1) : q.splice(0);
        if (q.length === 0) queued.delete(k);
        queuedCount -= taken.length;
        groups.set(k, taken.map((e) => e.w));
      }
      for (const [k, group] of groups) {
        busyPolicies.add(k);
        track(runGroup(group[0]!.kind, group[0]!.policy, group).finally(() => busyPolicies.delete(k)));
      }
    }
    let anyRunnable = false;
    if (!result.interrupted) for (const n of pendingNodes) if (ready(n)) { anyRunnable = true; break; }
    if (inflight.size === 0 && !anyRunnable && (queuedCount === 0 || result.interrupted)) break;
    if (inflight.size === 0 && anyRunnable) continue;
    if (inflight.size === 0 && queuedCount) continue;
    if (ctx.signal?.aborted && !result.interrupted) continue;
    await new Promise<void>((res) => {
      wake = res;
    });
  }
  if (result.interrupted) {
    // Not done: never started, or started but stopped before its write (work still queued, or
    // refused by the abort). Reported as not started; the state keeps what it had for them.
    for (const n of nodes.values()) {
      if (n.status === "running") emit({ type: "step", address: n.change.address, action: n.action, phase: "interrupted", ...(n.change.policy ? { policy: n.change.policy } : {}) });
      if (n.status === "pending" || n.status === "running") result.skipped.push(n.change.address);
    }
  }

  // Outputs: computed when everything they need is known.
  if (!result.interrupted) {
    const outputs: Obj = Object.create(null); // any name, __proto__ too
    for (const [name, oc] of Object.entries(plan.output_changes)) {
      if (oc.actions[0] === "delete") continue;
      const config = plan.configuration?.outputs;
      const raw = config && Object.hasOwn(config, name) ? config[name] : undefined;
      const diags: Diagnostic[] = [];
      const v = raw === undefined ? oc.after : resolveValue(raw, ["outputs", name], scope, undefined, diags);
      if (!diags.length && !containsUnknown(v)) outputs[name] = v;
      else if (Object.hasOwn(state.outputs, name)) outputs[name] = state.outputs[name];
    }
    if (!plan.options.targets.length && !jsonEqual(state.outputs, outputs)) {
      state.outputs = outputs;
      version++;
    }
  }
  for (;;) {
    hurry?.(); // a delayed save runs now
    if (!saving) break;
    await saving;
  }
  await save(true);
  return result;
}
