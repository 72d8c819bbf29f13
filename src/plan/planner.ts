// plan(): refresh (one read per distinct policy) → evaluate the stack → diff desired vs state vs
// live → a serialisable Plan. The only I/O is reads through the CloudPort.
import pLimit from "p-limit";
import type { GetFederationResult, Plan, Policy, ResourceChange, State, StateResource } from "../generated/schemas.js";
import type { StackModel, ResourceDecl, VariableDecl } from "../config/model.js";
import { type Diagnostic, error, hasErrors, warning } from "../diagnostics/diagnostic.js";
import { UNKNOWN, containsUnknown, hasInterpolation, isUnknown, stripUnknown, unknownMask } from "../config/expressions.js";
import { resolveValue, type Scope } from "../config/resolve.js";
import { lintResolved } from "../config/lint.js";
import { formatPath } from "../config/source.js";
import { resourceDriver } from "../drivers/registry.js";
import type { IamDriver, IamInputs } from "../drivers/types.js";
import { validate } from "../schemas/index.js";
import { type CloudPort, type PolicyKind, statusOf } from "../engine/cloud-port.js";
import { type Emit, noEmit } from "../engine/events.js";
import { PROVIDER_SCHEMA_VERSION, TOOL_VERSION } from "../version.js";
import { changedFields, jsonEqual, sameInputs } from "./compare.js";
import { accessDelta, plannedPolicies } from "./access.js";
import { plannedPolicySizeErrors } from "../config/policy-size.js";
import { priorStateRecord, stackConfiguration, stateResourcesByPolicy } from "./plan-configuration.js";

export interface PlanOptions {
  refresh: boolean;
  destroy: boolean;
  targets: string[];
  replace: string[];
  parallelism: number;
  /**
   * false: the per-resource approach of Terraform's Google provider and Pulumi's google-native
   * (one policy read per resource on refresh), kept for comparison (`--iam-batching=false`).
   */
  iamBatching?: boolean;
  /** Now, for the timestamp and expired-condition lint (injectable for tests) */
  now?: () => Date;
  /** Lint warnings on resolved values are errors (--strict). */
  strict?: boolean;
  /** Where the calls go, recorded in the plan for its readers (e.g. "embedded emulator"). */
  target?: string;
  /** Ctrl-C: once aborted, no read is sent (the plan that comes back is then incomplete). */
  signal?: AbortSignal;
}

export interface PlanResult {
  plan: Plan;
  diagnostics: Diagnostic[];
  /** The prior state with every resource refreshed from the live cloud (for `refresh`). */
  refreshed: StateResource[];
  /** Policies read during refresh, keyed "{kind} {name}": apply starts its writes from them. */
  live: Map<string, Policy>;
}

/** Longest stretch (ms) of planning without letting the event loop handle I/O. */
const YIELD_EVERY_MS = 5;

type Read<T> = { ok: true; value: T } | { ok: false; error: Error };

export async function plan(stack: StackModel, prior: State | undefined, cloud: CloudPort, opts: PlanOptions, emit: Emit = noEmit): Promise<PlanResult> {
  const diags: Diagnostic[] = [];
  const limit = pLimit(Math.max(1, opts.parallelism));
  const defaults = { project: stack.provider.project, location: stack.provider.location };
  const src = stack.source;

  // --- refresh: one memoised read per distinct policy, bounded parallelism -------------------
  const policies = new Map<string, Promise<Read<Policy | undefined>>>();
  const policyReads: Plan["policies"] = [];
  const batching = opts.iamBatching !== false;
  const readPolicy = (kind: PolicyKind, name: string, owner = ""): Promise<Read<Policy | undefined>> => {
    const key = batching ? `${kind} ${name}` : `${kind} ${name} #${owner}`;
    let p = policies.get(key);
    if (!p) {
      // The state resources this read refreshes (for the events).
      const ownerInState = priorByAddress.get(owner);
      const resources = batching ? (stateOnPolicy.get(`${kind} ${name}`) ?? []) : ownerInState ? [{ address: ownerInState.address, type: ownerInState.type }] : [];
      p = limit(async () => {
        const t0 = Date.now();
        emit({ type: "refresh", kind, policy: name, resources, phase: "start" });
        try {
          const policy = await cloud.getIamPolicy(kind, name, opts.signal);
          emit({ type: "refresh", kind, policy: name, resources, phase: "done", found: policy !== undefined, ms: Date.now() - t0 });
          policyReads.push({ kind, name, found: policy !== undefined, ...(policy?.etag ? { etag: policy.etag } : {}) });
          return { ok: true as const, value: policy };
        } catch (e) {
          emit({ type: "refresh", kind, policy: name, resources, phase: "error", ms: Date.now() - t0 });
          return { ok: false as const, error: e as Error };
        }
      });
      policies.set(key, p);
    }
    return p;
  };
  // One diagnostic per unreadable policy, naming the resources it holds (not one per resource).
  const readFailures = new Map<string, { addresses: string[]; error: Error }>();
  const readFailed = (address: string, name: string, e: Error) => {
    const f = readFailures.get(name);
    if (f) f.addresses.push(address);
    else readFailures.set(name, { addresses: [address], error: e });
  };

  const priorByAddress = new Map((prior?.resources ?? []).map((r) => [r.address, r]));
  const stateOnPolicy = stateResourcesByPolicy(prior);
  if (opts.refresh) {
    for (const r of prior?.resources ?? []) {
      const d = resourceDriver(r.type);
      if (d) void readPolicy(d.kind, String(r.inputs.name), r.address);
    }
    // Only batching reads ahead: without it, do not normalise every resource for nothing.
    if (!opts.destroy && batching) {
      for (const r of stack.resources.values()) {
        if (typeof r.properties.name === "string" && !hasInterpolation(r.properties.name)) {
          const n = r.driver.normalize(r.properties, defaults).inputs.name;
          if (n.startsWith("projects/")) void readPolicy(r.driver.kind, n, r.name);
        }
      }
    }
  }

  // A plan fails where apply would: a grant on an object that does not exist cannot be made.
  const objectMissing = (address: string, d: IamDriver, name: string) => {
    diags.push(error(`${address}: ${d.kind === "restorePlan" ? "restore plan" : "endpoint"} ${name} does not exist`, { address, file: src.file, ...src.position(["resources", address, "properties", "name"]), detail: "Create it first, or correct the name. Nothing was changed." }));
    values.set(address, UNKNOWN);
  };

  // What live says about a state resource: refreshed inputs, undefined when gone.
  type Observed = { inputs: IamInputs | undefined; etag: string; missing?: boolean };
  const observed = new Map<string, Observed>();
  const observe = async (r: StateResource, d: IamDriver): Promise<Observed | undefined> => {
    const inputs = r.inputs as unknown as IamInputs;
    if (!opts.refresh) return { inputs, etag: String(r.outputs.etag ?? "") };
    const cached = observed.get(r.address);
    if (cached) return cached;
    const read = await readPolicy(d.kind, inputs.name, r.address);
    if (!read.ok) {
      readFailed(r.address, inputs.name, read.error);
      return undefined;
    }
    const o = read.value ? { inputs: d.observe(inputs, read.value), etag: read.value.etag ?? "" } : { inputs: undefined, etag: "", missing: true };
    observed.set(r.address, o);
    return o;
  };

  // --- evaluation scope -------------------------------------------------------------------
  const values = new Map<string, unknown>();
  const scope: Scope = (root) => (values.has(root) ? { value: values.get(root) } : undefined);
  const changes: ResourceChange[] = [];
  const drift: ResourceChange[] = [];
  const planVariables: Record<string, unknown> = Object.create(null); // any name, __proto__ too
  const desiredAddresses = new Set<string>();
  const ownership = new Map<string, string>();

  const deps = (name: string) => stack.graph.dependencies(name);

  const planVariable = async (v: VariableDecl) => {
    if (!v.invoke) {
      const value = resolveValue(v.value, ["variables", v.name], scope, src, diags);
      values.set(v.name, value);
      if (!containsUnknown(value)) planVariables[v.name] = value;
      return;
    }
    const at = ["variables", v.name, "fn::invoke", "arguments"];
    const args = resolveValue(v.invoke.arguments, at, scope, src, diags) as Record<string, unknown>;
    const base: Omit<ResourceChange, "change"> = { address: v.name, mode: "data", type: v.invoke.token, name: v.name, dependencies: deps(v.name) };
    if (containsUnknown(args)) {
      values.set(v.name, UNKNOWN);
      changes.push({
        ...base,
        change: { actions: ["read"], before: null, after: null, after_unknown: true, before_sensitive: false, after_sensitive: false },
        action_reason: "read_because_dependency_pending",
        config: { function: v.invoke.token, arguments: v.invoke.arguments },
      });
      return;
    }
    const argErrors = validate(v.invoke.driver.argsSchema, args);
    if (argErrors.length) {
      for (const e of argErrors) {
        const p = [...at, ...e.instancePath.split("/").filter(Boolean)];
        const pos = src.position(p);
        diags.push(error(`${v.name}: argument ${formatPath(p.slice(at.length)) || "arguments"} ${e.message}`, { file: src.file, line: pos.line, column: pos.column, path: formatPath(p), address: v.name }));
      }
      values.set(v.name, UNKNOWN);
      return;
    }
    const named = v.invoke.driver.objectName(args, defaults);
    if ("problem" in named) {
      const p = [...at, ...named.problem.path];
      const pos = src.position(p);
      diags.push(error(`${v.name}: ${named.problem.message}`, { file: src.file, line: pos.line, column: pos.column, path: formatPath(p), address: v.name }));
      values.set(v.name, UNKNOWN);
      return;
    }
    const t0 = Date.now();
    emit({ type: "read", address: v.name, token: v.invoke.token, object: named.name, phase: "start" });
    try {
      const result: GetFederationResult = v.invoke.driver.toResult(await limit(() => cloud.getFederation(named.name, opts.signal)));
      emit({ type: "read", address: v.name, token: v.invoke.token, object: named.name, phase: "done", ms: Date.now() - t0 });
      values.set(v.name, result);
      planVariables[v.name] = result;
    } catch (e) {
      emit({ type: "read", address: v.name, token: v.invoke.token, object: named.name, phase: "error", ms: Date.now() - t0 });
      const notFound = statusOf(e) === "NOT_FOUND";
      diags.push(error(notFound ? `${v.name}: federation ${named.name} does not exist` : `${v.name}: cannot read federation ${named.name}`, { address: v.name, detail: (e as Error).message, file: src.file, ...src.position(["variables", v.name]) }));
      values.set(v.name, UNKNOWN);
    }
  };

  const plannedValue = (d: IamDriver, inputs: IamInputs, etag: unknown): Record<string, unknown> => {
    if (containsUnknown(inputs)) {
      const name = inputs.name as unknown;
      return { ...inputs, etag: UNKNOWN, id: UNKNOWN, project: isUnknown(name) ? UNKNOWN : d.outputs(inputs, "").project };
    }
    return { ...d.outputs(inputs, ""), etag };
  };

  const change = (base: Omit<ResourceChange, "change">, actions: ResourceChange["change"]["actions"], before: unknown, after: unknown, extra: Partial<ResourceChange["change"]> = {}): ResourceChange => ({
    ...base,
    change: {
      actions,
      before: before === null ? null : stripUnknown(before),
      after: after === null ? null : stripUnknown(after),
      after_unknown: after === null ? {} : unknownMask(after),
      before_sensitive: false,
      after_sensitive: false,
      ...extra,
    },
  });

  const planResource = async (r: ResourceDecl) => {
    const d = r.driver;
    const at = ["resources", r.name, "properties"];
    desiredAddresses.add(r.name);
    const errorsBefore = diags.length;
    const raw = resolveValue(r.properties, at, scope, src, diags) as Record<string, unknown>;
    let desired: IamInputs;
    const known = !containsUnknown(raw);
    if (known) {
      const schemaErrors = validate(d.inputsSchema, raw);
      for (const e of schemaErrors) {
        const p = [...at, ...e.instancePath.split("/").filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s))];
        const pos = src.position(p);
        diags.push(error(`${r.name}: ${formatPath(p.slice(2))} ${e.message}`, { file: src.file, line: pos.line, column: pos.column, path: formatPath(p), address: r.name }));
      }
      if (schemaErrors.length) return void values.set(r.name, UNKNOWN);
      const n = d.normalize(raw, defaults);
      for (const p of n.problems) {
        const pos = src.position([...at, ...p.path]);
        diags.push(error(`${r.name}: ${p.message}`, { file: src.file, line: pos.line, column: pos.column, path: formatPath([...at, ...p.path]), address: r.name }));
      }
      if (n.problems.length) return void values.set(r.name, UNKNOWN);
      // Values from `${…}` are linted now that they are known (literal ones were at load).
      if (r.refs.length) diags.push(...lintResolved(stack, r.name, r.properties, raw, { strict: opts.strict === true, now: (opts.now ?? (() => new Date()))() }));
      desired = n.inputs;
      const key = d.token + d.ownershipKey(desired);
      const other = ownership.get(key);
      if (other) {
        diags.push(error(`resources "${other}" and "${r.name}" manage the same ${d.ownership === "binding" ? `binding (${desired.role} on ${desired.name})` : `member (${desired.member}, ${desired.role} on ${desired.name})`}`, { address: r.name, file: src.file, ...src.position(["resources", r.name], { key: true }) }));
      } else ownership.set(key, r.name);
    } else {
      // Known parts are normalised (so the name is complete); unknown parts stay unknown.
      const partial = Object.fromEntries(Object.entries(raw).filter(([, v]) => !containsUnknown(v)));
      const n = d.normalize({ name: "x", role: "roles/x", members: [], member: "user:x@x.x", ...partial }, defaults);
      desired = { ...raw, ...Object.fromEntries(Object.keys(partial).map((k) => [k, (n.inputs as unknown as Record<string, unknown>)[k]])) } as unknown as IamInputs;
    }
    // Errors only: a lint warning on a resolved value does not stop the resource from planning.
    if (diags.slice(errorsBefore).some((d) => d.severity === "error")) return void values.set(r.name, UNKNOWN);

    const base: Omit<ResourceChange, "change"> = {
      address: r.name,
      mode: "managed",
      type: r.type,
      name: r.name,
      dependencies: deps(r.name),
      ...(r.options.protect ? { protect: true } : {}),
      ...(isUnknown(desired.name) ? {} : { policy: desired.name }),
      ...(known ? {} : { config: { properties: r.properties } }),
    };
    const stateRes = priorByAddress.get(r.name);
    const priorDriver = stateRes ? resourceDriver(stateRes.type) : undefined;

    // Apply ignoreChanges: keep the prior value of those inputs.
    const withIgnored = (live: IamInputs | undefined): IamInputs => {
      if (!live || r.options.ignoreChanges.length === 0) return desired;
      const out = { ...desired } as unknown as Record<string, unknown>;
      for (const f of r.options.ignoreChanges) out[f] = (live as unknown as Record<string, unknown>)[f];
      return out as unknown as IamInputs;
    };

    if (stateRes && priorDriver && stateRes.type === r.type) {
      if (stateRes.adopted) base.before_adopted = true;
      const o = await observe(stateRes, d);
      if (!o) return void values.set(r.name, UNKNOWN);
      const priorInputs = stateRes.inputs as unknown as IamInputs;
      const before = o.inputs ? d.outputs(o.inputs, o.etag) : null;
      if (!o.inputs || !sameInputs(d, priorInputs, o.inputs)) {
        drift.push(change({ ...base, dependencies: stateRes.dependencies }, o.inputs ? ["update"] : ["delete"], stateRes.outputs, before));
      }
      if (o.missing && (isUnknown(desired.name) || desired.name === priorInputs.name)) return void objectMissing(r.name, d, priorInputs.name);
      if (!o.inputs) {
        const after = plannedValue(d, desired, UNKNOWN);
        delete base.before_adopted;
        changes.push({ ...change(base, ["create"], null, after), action_reason: "create_because_gone" });
        return void values.set(r.name, after);
      }
      const target = withIgnored(o.inputs);
      const fields = changedFields(d, o.inputs, target);
      const replaceFields = fields.filter((f) => d.replaceOn.includes(f));
      const byRequest = opts.replace.includes(r.name);
      if (replaceFields.length || byRequest) {
        const after = plannedValue(d, target, UNKNOWN);
        const adopted = replaceFields.length ? await adopts(d, target) : stateRes.adopted === true;
        changes.push({
          ...change(base, ["create", "delete"], before, after, { replace_paths: (byRequest && !replaceFields.length ? d.replaceOn.slice(0, 1) : replaceFields).map((f) => [f]) }),
          action_reason: byRequest ? "replace_by_request" : "replace_because_cannot_update",
          ...(adopted ? { after_adopted: true } : {}),
        });
        return void values.set(r.name, after);
      }
      if (stateRes.adopted) base.after_adopted = true;
      if (fields.length) {
        const after = plannedValue(d, target, UNKNOWN);
        changes.push(change(base, ["update"], before, after));
        return void values.set(r.name, after);
      }
      const stateOnly = stateRes.protect === true !== (r.options.protect === true) ? { state_only: ["protect" as const] } : {};
      changes.push({ ...change(base, ["no-op"], before, before), ...stateOnly });
      return void values.set(r.name, before);
    }

    if (stateRes && stateRes.type !== r.type) {
      // Same address, another type: destroy the old one (after the new one exists).
      changes.push(deleteChange(stateRes, "replace_because_cannot_update"));
    }

    if (r.options.import !== undefined && !stateRes) {
      const importId = r.options.import;
      const targetOrError = d.parseImportId(importId, defaults);
      if (typeof targetOrError === "string") {
        diags.push(error(`${r.name}: ${targetOrError}`, { address: r.name }));
        return void values.set(r.name, UNKNOWN);
      }
      const read = await readPolicy(d.kind, targetOrError.name, r.name);
      if (!read.ok) {
        readFailed(r.name, targetOrError.name, read.error);
        return void values.set(r.name, UNKNOWN);
      }
      const adopted = read.value ? d.adopt(targetOrError, read.value) : `${targetOrError.name} does not exist`;
      if (typeof adopted === "string") {
        diags.push(error(`${r.name}: cannot import "${importId}": ${adopted}`, { address: r.name, file: src.file, ...src.position(["resources", r.name, "options", "import"]) }));
        return void values.set(r.name, UNKNOWN);
      }
      const before = d.outputs(adopted, read.value?.etag ?? "");
      const target = withIgnored(adopted);
      const fields = changedFields(d, adopted, target);
      const mismatch = fields.filter((f) => d.replaceOn.includes(f));
      if (mismatch.length) {
        diags.push(error(`${r.name}: import ID "${importId}" designates a different grant than the configuration (${mismatch.join(", ")} differ)`, { address: r.name, file: src.file, ...src.position(["resources", r.name, "options", "import"]) }));
        return void values.set(r.name, UNKNOWN);
      }
      if (fields.length) {
        const after = plannedValue(d, target, UNKNOWN);
        changes.push(change(base, ["update"], before, after, { importing: { id: importId } }));
        return void values.set(r.name, after);
      }
      changes.push(change(base, ["no-op"], before, before, { importing: { id: importId } }));
      return void values.set(r.name, before);
    }

    // The policy was read in advance; a create must not hide that it cannot be read or written.
    if (opts.refresh && batching && !isUnknown(desired.name)) {
      const read = await readPolicy(d.kind, desired.name, r.name);
      if (!read.ok) {
        readFailed(r.name, desired.name, read.error);
        return void values.set(r.name, UNKNOWN);
      }
      if (!read.value) return void objectMissing(r.name, d, desired.name);
    }
    const after = plannedValue(d, desired, UNKNOWN);
    changes.push({ ...change(base, ["create"], null, after), ...((await adopts(d, desired)) ? { after_adopted: true } : {}) });
    values.set(r.name, after);
  };

  // A member resource whose grant already exists live adopts it: destroy will leave it in place.
  // (A binding is authoritative: it owns whatever its role holds, so it adopts nothing.)
  const adopts = async (d: IamDriver, desired: IamInputs): Promise<boolean> => {
    if (d.ownership !== "member" || !opts.refresh || !batching || containsUnknown(desired)) return false;
    const read = await readPolicy(d.kind, desired.name);
    return read.ok && read.value !== undefined && d.observe(desired, read.value) !== undefined;
  };

  const deleteChange = (s: StateResource, reason: ResourceChange["action_reason"]): ResourceChange => ({
    address: s.address,
    mode: "managed",
    type: s.type,
    name: s.address,
    dependencies: s.dependencies,
    policy: String(s.inputs.name),
    ...(s.protect ? { protect: true } : {}),
    ...(s.adopted ? { before_adopted: true } : {}),
    change: { actions: ["delete"], before: s.outputs, after: null, after_unknown: {}, before_sensitive: false, after_sensitive: false },
    ...(reason ? { action_reason: reason } : {}),
  });

  // --- walk ---------------------------------------------------------------------------------
  if (!opts.destroy) {
    // Planning a resource whose policy is already read awaits nothing, so a long walk would keep
    // the event loop from handling the refresh responses (and starting the next reads): yield
    // to it every few milliseconds.
    let yielded = Date.now();
    for (const name of stack.order) {
      const v = stack.variables.get(name);
      if (v) await planVariable(v);
      const r = stack.resources.get(name);
      if (r) await planResource(r);
      if (Date.now() - yielded >= YIELD_EVERY_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        yielded = Date.now();
      }
    }
  }

  // State resources no longer configured (or everything, when destroying) are deleted.
  for (const s of prior?.resources ?? []) {
    if (desiredAddresses.has(s.address)) continue;
    const d = resourceDriver(s.type);
    if (!d) {
      diags.push(error(`${s.address}: state holds unknown type "${s.type}"`, { address: s.address, detail: "Remove it with `converge state rm`." }));
      continue;
    }
    const o = await observe(s, d);
    if (o && (!o.inputs || !sameInputs(d, s.inputs as unknown as IamInputs, o.inputs))) {
      drift.push({ ...deleteChange(s, undefined), change: { actions: o.inputs ? ["update"] : ["delete"], before: s.outputs, after: o.inputs ? d.outputs(o.inputs, o.etag) : null, after_unknown: {}, before_sensitive: false, after_sensitive: false } });
    }
    // protect as the stack says it now (an apply is not needed to set or clear it); the state's
    // for a resource the stack no longer has.
    const declared = stack.resources.get(s.address);
    if (declared ? declared.options.protect === true : s.protect === true) {
      diags.push(error(`${s.address} has protect: true and cannot be destroyed`, { address: s.address, detail: opts.destroy ? "Set options.protect: false on it and apply, then destroy." : "It is no longer in the stack. Put it back with protect: false and apply first, or forget it with `converge state rm`." }));
      continue;
    }
    changes.push(deleteChange(s, opts.destroy ? undefined : "delete_because_no_resource_config"));
  }
  for (const [name, f] of readFailures) {
    const shown = f.addresses.slice(0, 5).join(", ") + (f.addresses.length > 5 ? ` and ${f.addresses.length - 5} more` : "");
    const summary = f.addresses.length === 1 ? `${f.addresses[0]}: cannot read the IAM policy of ${name}` : `cannot read the IAM policy of ${name} (${f.addresses.length} resources: ${shown})`;
    const first = f.addresses[0]!;
    const at = stack.resources.has(first) ? { file: src.file, ...src.position(["resources", first, "properties", "name"]) } : {};
    diags.push(error(summary, { address: first, detail: f.error.message, ...at }));
  }

  // --- targets: only the targeted resources and what they depend on --------------------------
  for (const r of opts.replace) {
    if (!stack.resources.has(r) && !priorByAddress.has(r)) diags.push(error(`--replace ${r}: no resource has this address`, { detail: `Resources: ${[...stack.resources.keys()].join(", ") || "(none)"}.` }));
  }
  let selected = changes;
  if (opts.targets.length) {
    diags.push(warning("Resource targeting is in effect", {
      detail: "You are creating a plan with --target, which means that the result of this plan may not represent all of the changes requested by the current stack. --target is not for routine use: it is for exceptional situations such as recovering from errors or mistakes, or when converge suggests it in an error message.",
    }));
    const keep = new Set<string>();
    for (const t of opts.targets) {
      if (!stack.graph.has(t) && !priorByAddress.has(t)) diags.push(error(`--target ${t}: no resource or variable has this address`));
      keep.add(t);
      if (stack.graph.has(t)) for (const a of stack.graph.ancestors(t)) keep.add(a);
    }
    selected = changes.filter((c) => keep.has(c.address));
  }

  // --- outputs --------------------------------------------------------------------------------
  const outputChanges: Plan["output_changes"] = Object.create(null); // any name, __proto__ too
  if (!opts.destroy && !opts.targets.length) {
    for (const o of stack.outputs.values()) {
      const value = resolveValue(o.value, ["outputs", o.name], scope, src, diags);
      const before = prior?.outputs[o.name];
      const exists = prior !== undefined && Object.hasOwn(prior.outputs, o.name);
      const actions: ResourceChange["change"]["actions"] = !exists ? ["create"] : containsUnknown(value) || !jsonEqual(before, value) ? ["update"] : ["no-op"];
      outputChanges[o.name] = { actions, before: exists ? before : null, after: stripUnknown(value), after_unknown: unknownMask(value), before_sensitive: false, after_sensitive: false };
    }
  }
  for (const [name, before] of Object.entries(prior?.outputs ?? {})) {
    if (opts.destroy || !stack.outputs.has(name)) outputChanges[name] = { actions: ["delete"], before, after: null, after_unknown: false, before_sensitive: false, after_sensitive: false };
  }

  // Refreshed view of the state resources (for `converge refresh`).
  const refreshed: StateResource[] = [];
  for (const s of prior?.resources ?? []) {
    const o = observed.get(s.address);
    const d = resourceDriver(s.type);
    if (!opts.refresh || !d || !o) refreshed.push(s);
    else if (o.inputs) refreshed.push({ ...s, inputs: o.inputs as unknown as Record<string, unknown>, outputs: d.outputs(o.inputs, o.etag) });
  }

  const errored = hasErrors(diags);
  const applyable = !errored && (selected.some((c) => !(c.change.actions.length === 1 && c.change.actions[0] === "no-op" && !c.change.importing && !c.state_only)) || Object.values(outputChanges).some((c) => c.actions[0] !== "no-op"));
  const result: Plan = {
    format_version: "1.2",
    converge_version: TOOL_VERSION,
    provider_schema_version: PROVIDER_SCHEMA_VERSION,
    timestamp: (opts.now ?? (() => new Date()))().toISOString(),
    stack: { name: stack.name, file: stack.file },
    ...(opts.target ? { target: opts.target } : {}),
    prior_state: priorStateRecord(prior, refreshed),
    provider: {
      endpoint: stack.provider.endpoint,
      ...(stack.provider.project ? { project: stack.provider.project } : {}),
      ...(stack.provider.location ? { location: stack.provider.location } : {}),
      ...(stack.provider.seed ? { seed: stack.provider.seed } : {}),
    },
    options: { refresh: opts.refresh, destroy: opts.destroy, targets: opts.targets, replace: opts.replace },
    applyable,
    errored,
    resource_changes: selected,
    resource_drift: drift,
    output_changes: outputChanges,
    variables: planVariables,
    configuration: stackConfiguration(stack),
    policies: policyReads.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    diagnostics: diags,
  };
  const live = new Map<string, Policy>();
  for (const [key, p] of batching ? policies : []) {
    const r = await p;
    if (r.ok && r.value) live.set(key, r.value);
  }
  if (!errored) {
    const seen = new Map(live);
    if (!batching) for (const [key, p] of policies) { const r = await p; if (r.ok && r.value) seen.set(key.slice(0, key.lastIndexOf(" #")), r.value); }
    const planned = plannedPolicies(selected, seen, opts.refresh);
    result.access_changes = accessDelta(planned);
    const oversized = plannedPolicySizeErrors(stack, planned.policies);
    if (oversized.length) {
      diags.push(...oversized);
      result.errored = true;
      result.applyable = false;
    }
  }
  return { plan: result, diagnostics: diags, refreshed, live };
}

/** The single action a change stands for, for rendering and counting. */
export type DisplayAction = "create" | "update" | "replace" | "delete" | "read" | "import" | "import-update" | "no-op";

export function displayAction(c: ResourceChange): DisplayAction {
  const a = c.change.actions;
  if (c.change.importing) return a[0] === "update" ? "import-update" : "import";
  if (a.length === 2) return "replace";
  return a[0] as DisplayAction;
}

export function planCounts(p: Plan): { import: number; add: number; change: number; destroy: number } {
  const n = { import: 0, add: 0, change: 0, destroy: 0 };
  for (const c of p.resource_changes) {
    if (c.mode !== "managed") continue;
    switch (displayAction(c)) {
      case "create": n.add++; break;
      case "update": n.change++; break;
      case "replace": n.add++; n.destroy++; break;
      case "delete": n.destroy++; break;
      case "import": n.import++; break;
      case "import-update": n.import++; n.change++; break;
      default:
    }
  }
  return n;
}
