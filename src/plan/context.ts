// What the planning steps share while one plan is made: the inputs, the evaluation scope, the
// refresh, and what has been decided so far. Made by plan(); each step reads and adds to it.
import type { RuleSet } from "../guardrails/rules.js";
import pLimit, { type LimitFunction } from "p-limit";
import type { ResourceChange, State, StateResource } from "../generated/schemas.js";
import type { StackModel } from "../config/model.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { type Scope, valuesScope } from "../language/resolve.js";
import type { NameDefaults, ProjectIds } from "../cloud/names.js";
import type { CloudPort, PolicyRef } from "../contracts/cloud-port.js";
import type { Emit } from "../contracts/events.js";
import { Refresh } from "./refresh.js";
import { ClaimIndex } from "../claims/conflict-rule.js";
import { OwnGrants } from "./ownership.js";
import { pushAll } from "../base/arrays.js";
import { secretStrings, sensitive } from "../language/sensitive.js";

export interface PlanOptions {
  refresh: boolean;
  destroy: boolean;
  targets: string[];
  replace: string[];
  parallelism: number;
  /** Now, for the timestamp and expired-condition lint (injectable for tests) */
  now?: () => Date;
  /** Lint warnings on resolved values are errors (--strict). */
  strict?: boolean;
  /** Where the calls go, recorded in the plan for its readers (e.g. "embedded emulator"). */
  target?: string;
  /** Ctrl-C: once aborted, no read is sent (the plan that comes back is then incomplete). */
  signal?: AbortSignal;
  /** readAheadPolicies(stack, prior, these options) as the caller already worked it out (the
   *  session's prefetch, ../engine/prefetch.ts): 100,000 resources take a second to go over. */
  readAhead?: readonly PolicyRef[];
  /** Project numbers → IDs (../engine/project-ids.ts): names are completed with the ID. The
   *  prior state is expected to name its objects so already (priorWithProjectIds). */
  projectIds?: ProjectIds;
  /** Grants converge wrote that the prior state does not record yet (settled pending writes,
   *  ../engine/settle.ts): converge's own, never adopted. */
  ownGrants?: readonly StateResource[];
  /** The guardrail rules (../guardrails/rules.ts) every access change is checked against. */
  guardrails?: RuleSet;
  /** The workspace planned, as rules see it. */
  workspace?: string;
}

export interface PlanContext {
  readonly stack: StackModel;
  readonly prior: State | undefined;
  readonly priorByAddress: ReadonlyMap<string, StateResource>;
  readonly cloud: CloudPort;
  readonly opts: PlanOptions;
  readonly emit: Emit;
  readonly limit: LimitFunction;
  readonly defaults: NameDefaults;
  readonly refresh: Refresh;
  /** Values known so far (variables, data sources, resources' planned outputs), by name. */
  readonly values: Map<string, unknown>;
  readonly scope: Scope;
  readonly diags: Diagnostic[];
  readonly changes: ResourceChange[];
  readonly drift: ResourceChange[];
  /** Variables whose values are known at plan time (any name, __proto__ too). */
  readonly variables: Record<string, unknown>;
  /** Addresses the stack declares (their state resources are not orphans). */
  readonly declared: Set<string>;
  /** The claims of the resources planned so far (two resources may not manage the same grant). */
  readonly owners: ClaimIndex<string>;
  /** The grants the prior state's resources hold that converge did not adopt (never adopted again) */
  readonly ownGrants: OwnGrants;
  /** Resources a `moved:` entry renamed in the prior state: new address → old address */
  readonly previous: ReadonlyMap<string, string>;
  /** The strings of secret values met while planning (never shown, never saved but in the state) */
  readonly secrets: Set<string>;
  /** Sensitivity masks of resources' planned values (Terraform's after_sensitive), by address */
  readonly masks: Map<string, unknown>;
}

export function planContext(
  stack: StackModel,
  prior: State | undefined,
  cloud: CloudPort,
  opts: PlanOptions,
  emit: Emit,
  previous: ReadonlyMap<string, string> = new Map(),
): PlanContext {
  const limit = pLimit(Math.max(1, opts.parallelism));
  const values = new Map<string, unknown>();
  const variables = Object.create(null) as Record<string, unknown>;
  // Inputs are known before anything else; the plan records them with the variables.
  // The secrets met while loading (the secret inputs' strings among them) are the plan's too.
  const secrets = new Set<string>(stack.secrets);
  for (const c of stack.config.values()) {
    if (c.value === undefined) continue;
    values.set(c.name, c.secret ? sensitive(c.value) : c.value);
    variables[c.name] = c.value;
  }
  // Values the state recorded as secret: a plan shows neither the new secret nor the old one.
  for (const r of prior?.resources ?? [])
    if (r.sensitive) for (const k of Object.keys(r.sensitive)) secretStrings(sensitive(r.inputs[k]), secrets);
  const refresh = new Refresh(
    cloud,
    limit,
    emit,
    { refresh: opts.refresh, ...(opts.signal ? { signal: opts.signal } : {}) },
    prior,
  );
  return {
    stack,
    prior,
    priorByAddress: byAddress(prior),
    cloud,
    opts,
    emit,
    limit,
    defaults: { project: stack.provider.project, location: stack.provider.location, projectIds: opts.projectIds },
    refresh,
    values,
    scope: valuesScope(values),
    diags: [],
    changes: [],
    drift: [],
    variables,
    declared: new Set(),
    owners: new ClaimIndex(),
    ownGrants: ownGrantsOf(prior, opts),
    previous,
    secrets,
    masks: new Map(),
  };
}

/** The state's resources by address (the last of an address wins), without a pair per resource. */
function byAddress(prior: State | undefined): Map<string, StateResource> {
  const out = new Map<string, StateResource>();
  for (const r of prior?.resources ?? []) out.set(r.address, r);
  return out;
}

/** The grants converge made: the prior state's, and those of settled pending writes no resource
 *  records yet (../engine/settle.ts); the state's list is not copied when there are none. */
function ownGrantsOf(prior: State | undefined, opts: PlanOptions): OwnGrants {
  const resources = prior?.resources ?? [];
  return new OwnGrants(opts.ownGrants?.length ? pushAll([...resources], opts.ownGrants) : resources);
}
