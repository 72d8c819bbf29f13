// Refresh: one memoised read per distinct policy, with bounded parallelism, started as early as
// the objects are known; what the live policies say about state resources; and one diagnostic
// per policy that could not be read, naming the resources it holds.
import type { LimitFunction } from "p-limit";
import type { Plan, Policy, State, StateResource } from "../generated/schemas.js";
import type { StackModel } from "../config/model.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { hasInterpolation } from "../language/expressions.js";
import { resourceDriver } from "../drivers/registry.js";
import { completeNameOnce, type ProjectIds } from "../cloud/names.js";
import { noAccessToken } from "../cloud/errors.js";
import { noConnection } from "../cloud/reachability.js";
import type { IamDriver, IamInputs } from "../drivers/types.js";
import type { CloudPort, PolicyKind, PolicyRef } from "../contracts/cloud-port.js";
import type { Emit } from "../contracts/events.js";
import { stateResourcesByPolicy } from "./plan-configuration.js";
import { counted, listed } from "../diagnostics/listed.js";

export type Read<T> = { ok: true; value: T } | { ok: false; error: Error };

/** What live says about a state resource: its inputs as observed (undefined when its grant is
 *  gone), the policy etag, and whether the object itself is missing. */
export interface Observed {
  inputs: IamInputs | undefined;
  etag: string;
  missing?: boolean;
  /** The outputs of `inputs` (for the refreshed state), worked out as the read returns. */
  outputs?: Record<string, unknown>;
}

export interface RefreshOptions {
  refresh: boolean;
  signal?: AbortSignal;
}

/** The policies of the state's resources (their names are in the state: nothing to compute). */
export function statePolicies(prior: State | undefined): PolicyRef[] {
  const out: PolicyRef[] = [];
  for (const r of prior?.resources ?? []) {
    const d = resourceDriver(r.type);
    if (d) out.push({ kind: d.kind, name: String(r.inputs.name) });
  }
  return out;
}

/** The policies the stack names literally (full or short names; interpolated ones wait for the
 *  values they use), as the drivers complete them, with the address of the resource naming each. */
export function* stackPolicies(stack: StackModel, projectIds?: ProjectIds): Generator<PolicyRef & { address: string }> {
  const defaults = { project: stack.provider.project, location: stack.provider.location, projectIds };
  for (const r of stack.resources.values()) {
    const raw = r.properties.name;
    if (typeof raw !== "string" || hasInterpolation(raw)) continue;
    // The drivers' normalize does this to `name` (a name it cannot complete stays as written);
    // a policy's resources share its name (remembered: ten to one in the bench).
    const named = completeNameOnce(r.driver.kind, raw, defaults);
    const n = typeof named === "string" ? raw : named.full;
    if (n.startsWith("projects/")) yield { kind: r.driver.kind, name: n, address: r.name };
  }
}

/** What a plan reads before evaluating anything, in order, each policy once: with refresh, the
 *  state's policies, then (unless destroying) the stack's literal ones. A read of one of them that
 *  fails is reported only by a resource that needs it. */
export function* readAheadPolicies(
  stack: StackModel,
  prior: State | undefined,
  opts: { refresh: boolean; destroy: boolean; projectIds?: ProjectIds },
): Generator<PolicyRef> {
  if (!opts.refresh) return;
  const seen = new Set<string>();
  let last: PolicyRef | undefined;
  for (const p of opts.destroy
    ? statePolicies(prior)
    : [...statePolicies(prior), ...stackPolicies(stack, opts.projectIds)]) {
    // The resources of a policy are mostly side by side: the same policy again is already seen
    // (without building its key; ten to one in the bench).
    if (last !== undefined && p.name === last.name && p.kind === last.kind) continue;
    last = p;
    const key = `${p.kind} ${p.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    yield p;
  }
}

function observed(d: IamDriver, inputs: IamInputs | undefined, etag: string): Observed {
  return inputs ? { inputs, etag, outputs: d.outputs(inputs, etag) } : { inputs, etag };
}

export class Refresh {
  private readonly reads = new Map<string, Promise<Read<Policy | undefined>>>();
  private readonly failures = new Map<string, Failure>();
  private readonly observedByAddress = new Map<string, Observed>();
  /** Reads that have completed, by key: what pure decisions may look at without waiting. */
  /** By kind, then name: asked once or twice per resource, so without building a key. */
  private readonly settledReads = new Map<PolicyKind, Map<string, Read<Policy | undefined>>>();
  /** Every read made, for the plan's `policies` list. */
  readonly made: Plan["policies"] = [];

  /** The state resources on each policy ("{kind} {name}"): the refresh events name them. */
  private readonly stateOnPolicy: Map<string, { address: string; type: string }[]>;

  constructor(
    private readonly cloud: CloudPort,
    private readonly limit: LimitFunction,
    private readonly emit: Emit,
    readonly opts: RefreshOptions,
    prior: State | undefined,
  ) {
    this.stateOnPolicy = stateResourcesByPolicy(prior);
  }

  /** The policy of one object, read once: a read started ahead of planning is taken over. */
  read(kind: PolicyKind, name: string): Promise<Read<Policy | undefined>> {
    const key = `${kind} ${name}`;
    let p = this.reads.get(key);
    if (!p) {
      // The state resources this read refreshes (for the events).
      const resources = this.stateOnPolicy.get(key) ?? [];
      const started = this.cloud.takeStarted?.(kind, name);
      const read = started
        ? started.sent.then(() => this.fetch(kind, name, resources, () => started.policy))
        : this.limit(() =>
            this.fetch(kind, name, resources, () => this.cloud.getIamPolicy(kind, name, this.opts.signal)),
          );
      p = read.then((r) => {
        let byName = this.settledReads.get(kind);
        if (!byName) this.settledReads.set(kind, (byName = new Map()));
        byName.set(name, r);
        return r;
      });
      this.reads.set(key, p);
    }
    return p;
  }

  /** A completed read of the policy, without waiting; undefined if none yet. */
  settled(kind: PolicyKind, name: string): Read<Policy | undefined> | undefined {
    return this.settledReads.get(kind)?.get(name);
  }

  private async fetch(
    kind: PolicyKind,
    name: string,
    resources: readonly { address: string; type: string }[],
    get: () => Promise<Policy | undefined>,
  ): Promise<Read<Policy | undefined>> {
    const t0 = Date.now();
    this.emit({ type: "refresh", policy: name, resources, phase: "start" });
    try {
      const policy = await get();
      this.emit({ type: "refresh", policy: name, resources, phase: "done", ms: Date.now() - t0 });
      this.made.push({ kind, name, found: policy !== undefined, ...(policy?.etag ? { etag: policy.etag } : {}) });
      return { ok: true, value: policy };
    } catch (e) {
      this.emit({ type: "refresh", policy: name, resources, phase: "error", ms: Date.now() - t0 });
      return { ok: false, error: e as Error };
    }
  }

  /** Starts the reads of every policy the state and the stack name literally, before planning;
   *  `ahead`: that list as the session's prefetch already worked it out. */
  readAhead(
    stack: StackModel,
    prior: State | undefined,
    destroy: boolean,
    ahead?: readonly PolicyRef[],
    projectIds?: ProjectIds,
  ): void {
    for (const p of ahead ??
      readAheadPolicies(stack, prior, { refresh: this.opts.refresh, destroy, ...(projectIds ? { projectIds } : {}) }))
      void this.read(p.kind, p.name);
  }

  /** Records that `address` could not be planned because its policy could not be read. */
  failed(address: string, name: string, e: Error): void {
    const f = this.failures.get(name);
    if (f) f.addresses.push(address);
    else this.failures.set(name, { addresses: [address], error: e });
  }

  /** What live says about a state resource; undefined when its policy could not be read. Without
   *  waiting (no promise) once its policy's read has completed: the walk plans most resources so. */
  observe(r: StateResource, d: IamDriver): Observed | undefined | Promise<Observed | undefined> {
    const inputs = r.inputs as unknown as IamInputs;
    if (!this.opts.refresh) return { inputs, etag: String(r.outputs.etag ?? "") };
    const cached = this.observedByAddress.get(r.address);
    if (cached) return cached;
    const settled = this.settled(d.kind, inputs.name);
    if (settled) return this.observeRead(r, d, inputs, settled);
    return this.read(d.kind, inputs.name).then((read) => this.observeRead(r, d, inputs, read));
  }

  private observeRead(
    r: StateResource,
    d: IamDriver,
    inputs: IamInputs,
    read: Read<Policy | undefined>,
  ): Observed | undefined {
    if (!read.ok) {
      this.failed(r.address, inputs.name, read.error);
      return undefined;
    }
    const o: Observed = read.value
      ? observed(d, d.observe(inputs, read.value), read.value.etag ?? "")
      : { inputs: undefined, etag: "", missing: true };
    this.observedByAddress.set(r.address, o);
    return o;
  }

  observed(address: string): Observed | undefined {
    return this.observedByAddress.get(address);
  }

  /** One error per unreadable policy, at the `name` of the first resource that needed it; the
   *  policies not read for a cause that says the same for each (no access token, no connection to
   *  the API) are one error per cause. */
  failureDiagnostics(stack: StackModel): Diagnostic[] {
    let own = [...this.failures];
    const shared: Diagnostic[] = [];
    for (const cause of SHARED_CAUSES) {
      const alike: [string, Failure][] = [];
      const rest: [string, Failure][] = [];
      for (const x of own) (cause.is(x[1].error) ? alike : rest).push(x);
      if (alike.length < 2) continue;
      shared.push(this.sharedDiagnostic(stack, cause.lead, alike));
      own = rest;
    }
    return [...shared, ...own.map(([name, f]) => this.failureDiagnostic(stack, name, f))];
  }

  private failureDiagnostic(stack: StackModel, name: string, f: Failure): Diagnostic {
    const shown = listed(f.addresses, 5);
    const summary =
      f.addresses.length === 1
        ? `${f.addresses[0]}: cannot read the IAM policy of ${name}`
        : `cannot read the IAM policy of ${name} (${f.addresses.length} resources: ${shown})`;
    return error(summary, { address: f.addresses[0]!, detail: f.error.message, ...this.at(stack, f.addresses[0]!) });
  }

  private sharedDiagnostic(stack: StackModel, lead: string, failures: [string, Failure][]): Diagnostic {
    const resources = failures.reduce((n, [, f]) => n + f.addresses.length, 0);
    const first = failures[0]![1];
    const why = (first.error as { serverMessage?: string }).serverMessage || first.error.message;
    const summary =
      `${lead}: ${counted(failures.length, "IAM policy", "IAM policies")} (` +
      `${counted(resources, "resource")}) ${failures.length === 1 ? "was" : "were"} not read`;
    const detail = `${why}\nNot read: ${listed(
      failures.map(([name]) => name),
      5,
    )}`;
    return error(summary, { address: first.addresses[0]!, detail, ...this.at(stack, first.addresses[0]!) });
  }

  /** Where the stack names the policy of `address` (its `name`), when the stack declares it. */
  private at(stack: StackModel, address: string): { file?: string; line?: number; column?: number } {
    const r = stack.resources.get(address);
    return r ? { file: stack.source.file, ...stack.source.position(["resources", r.decl, "properties", "name"]) } : {};
  }

  /** The policies read, keyed "{kind} {name}" (apply starts its writes from them). */
  async live(): Promise<Map<string, Policy>> {
    const live = new Map<string, Policy>();
    for (const [key, p] of this.reads) {
      const r = await p;
      if (r.ok && r.value) live.set(key, r.value);
    }
    return live;
  }
}

/** A policy that could not be read: the resources that needed it, and why. */
interface Failure {
  addresses: string[];
  error: Error;
}

/** Causes of failed reads that say nothing about the policy, the same for every one: reported
 *  once, with how many policies they left unread (a 12,000-policy plan against a wrong endpoint
 *  printed 12,000 errors alike). */
const SHARED_CAUSES: readonly { is: (e: Error) => boolean; lead: string }[] = [
  { is: noAccessToken, lead: "no access token" },
  { is: noConnection, lead: "no connection to the API" },
];
