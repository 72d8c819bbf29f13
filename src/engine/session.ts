// An engine session: load → lock → state → cloud → plan → apply → save, for every front end
// (the CLI, tests, the Automation API in src/sdk). Each step is a function of its own; none of
// them renders or reads a flag: what a person sees comes from the events the steps emit
// (./events.ts) and the values they return. The caller chooses which steps to run and holds the lock around them.
// Apply and the saves after it are in ./session-apply.ts.
import { loadAnyStackFile } from "../sdk/load-any.js";
import { type LoadResult, loadStackFile } from "../config/load.js";
import type { StackModel } from "../config/model.js";
import type { GivenInputs } from "../config/inputs.js";
import { type Diagnostic, hasErrors, UserError } from "../diagnostics/diagnostic.js";
import { EMULATOR_HOST_ENV, withoutCredentials } from "../cloud/endpoint.js";
import type { Plan, Policy, State, StateResource } from "../generated/schemas.js";
import { plan, type PlanResult } from "../plan/planner.js";
import { readAheadPolicies } from "../plan/refresh.js";
import {
  inputsHash,
  redactPlan,
  redactValue,
  rememberSecrets,
  scrub,
  secretList,
  stateSecrets,
} from "../config/redact.js";
import { type StateStore, withLock } from "../state/index.js";
import { type BackendType, openStateStore, type StateIdentity, type StateLocation } from "../state/factory.js";
import { checkClaims } from "./claims-check.js";
import { openCloud, type OpenCloud } from "../connect/cloud.js";
import { prefetching } from "./prefetch.js";
import {
  claimProjectIds,
  knownProjectNumbers,
  lateProjectNumbers,
  priorWithProjectIds,
  type ProjectIds,
  resolveProjectNumbers,
} from "./project-ids.js";
import { NOTHING_PENDING, type Settlement, settleIntents } from "./settle.js";
import type { PolicyRef } from "../contracts/cloud-port.js";
import { type Emit, noEmit } from "../contracts/events.js";
import type { RateTable } from "../cloud/rate-limit.js";
import type { WorkspaceCatalog } from "../state/workspace.js";
import { loadRuleSet, policyFilesOf, type RuleSet } from "../guardrails/rules.js";
import type { Approval } from "../guardrails/enforce.js";

/** A loaded stack and the store of its state. */
export interface StackSession {
  stack: StackModel;
  /** Warnings found while loading (lint among them). */
  warnings: Diagnostic[];
  store: StateStore;
  /** The directory of the state: the embedded emulator keeps its world there. */
  stateDir: string;
  /** The workspace whose state `store` holds. */
  workspace: string;
  /** Which state `store` holds (backend, workspace, file or schema): a saved plan records it. */
  stateIdentity: StateIdentity;
  /** The stack's workspaces on its backend. */
  workspaces: WorkspaceCatalog;
  /** The guardrail rules in force (the stack's policies:, --policy files, CONVERGE_POLICY). */
  rules?: RuleSet;
}

export interface OpenStackRequest {
  file: string;
  /** An explicit state file (--state); default: state/{stack name}.json beside the stack file. */
  state?: string;
  /** --backend: overrides the stack's `backend.type`. */
  backend?: BackendType;
  /** --workspace (else CONVERGE_WORKSPACE, else the selected one, else default). */
  workspace?: string;
  strict?: boolean;
  /** Values given for the stack's inputs */
  inputs?: GivenInputs;
  /** Rules files (--policy); default: CONVERGE_POLICY's files (separated as PATH is). */
  policyFiles?: readonly string[];
}

/** Loads and checks the stack; when it does not load, a UserError with every diagnostic. */
export function openStack(req: OpenStackRequest): StackSession {
  return sessionOf(
    loadStackFile(req.file, { strict: req.strict === true, ...(req.inputs ? { inputs: req.inputs } : {}) }),
    req,
  );
}

/** openStack for a YAML stack or a program stack. */
export async function openStackFile(
  req: OpenStackRequest & { callTimeoutMs?: number; offline?: string },
): Promise<StackSession> {
  const opts = {
    strict: req.strict === true,
    ...(req.offline !== undefined ? { offline: req.offline } : {}),
    ...(req.state !== undefined ? { state: req.state } : {}),
    ...(req.callTimeoutMs !== undefined ? { callTimeoutMs: req.callTimeoutMs } : {}),
    ...(req.inputs ? { inputs: req.inputs } : {}),
    // A program's StackReference reads another stack's state from the backend --backend chooses.
    ...(req.backend !== undefined ? { backendType: req.backend } : {}),
  };
  return sessionOf(await loadAnyStackFile(req.file, opts), req);
}

/** The session of a loaded stack: its state store opened. */
export function sessionOf(
  { stack, diagnostics }: LoadResult,
  req: Omit<OpenStackRequest, "file"> & { file?: string },
): StackSession {
  if (!stack)
    throw new UserError(
      diagnostics.length ? diagnostics : { severity: "error", summary: `cannot load ${req.file ?? "the stack"}` },
    );
  const location: StateLocation = {
    stackFile: stack.file,
    stackName: stack.name,
    ...(req.state !== undefined ? { state: req.state } : {}),
    ...(stack.backend ? { backend: stack.backend } : {}),
    ...(req.backend !== undefined ? { backendType: req.backend } : {}),
    ...(req.workspace !== undefined ? { workspace: req.workspace } : {}),
  };
  // The rules are checked before the state is opened: a rule that does not load stops the command.
  const ruleDiags: Diagnostic[] = [];
  const rules = loadRuleSet(stack, req.policyFiles ?? policyFilesOf(), ruleDiags);
  if (hasErrors(ruleDiags)) throw new UserError(ruleDiags);
  const { store, dir, workspace, identity, workspaces } = openStateStore(location);
  const opened = { stack, warnings: diagnostics, store, stateDir: dir, workspace, stateIdentity: identity, workspaces };
  return rules ? { ...opened, rules } : opened;
}

/** Runs `fn` holding the state lock (waiting up to `timeoutMs`); released also on a throw. */
export function withStateLock<T>(
  store: StateStore,
  operation: string,
  timeoutMs: number | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  return withLock(store, operation, timeoutMs !== undefined ? { timeoutMs } : {}, fn);
}

export interface PlanRequest {
  refresh: boolean;
  destroy: boolean;
  targets: string[];
  replace: string[];
  parallelism: number;
  callTimeoutMs: number;
  /** --rate: requests per minute by service, over the defaults. */
  rates?: RateTable;
  strict?: boolean;
  /** Who applies and the owner-approval rules they approve (--approve). */
  approval?: Approval;
}

/** A plan and what applying it needs: the state it was made from, the policies it read, the
 *  open cloud (the caller closes it, with `close`). */
export interface PlannedStack {
  /** The plan as it may be shown and saved: no secret in it (see ../config/redact.ts). */
  plan: Plan;
  /** The plan apply executes, with the secrets' values: never shown, never saved. */
  real: Plan;
  /** The secret strings `plan` was scrubbed of (for anything else shown about this plan). */
  secrets: string[];
  /** Diagnostics of the planning (the plan's own list also has the loading warnings). */
  diagnostics: Diagnostic[];
  /** The prior state's resources as the refresh found them. */
  refreshed: StateResource[];
  /** Policies read while planning ("{kind} {name}"): apply's writes start from them. */
  live: Map<string, Policy>;
  prior: State | undefined;
  cloud: OpenCloud;
  /** Project numbers → IDs the plan used (its own names', and those in other stacks' claims). */
  projectIds?: ProjectIds;
  /** Pending writes of an interrupted run, settled: `prior` holds what landed (./settle.ts). */
  settlement?: Settlement;
  close(): Promise<void>;
}

/**
 * Reads the state, opens the cloud and plans; sends no read once `signal` aborts. The reads the
 * plan starts with begin as soon as the state is known to be good and the cloud is open (a corrupt
 * state is bad input: nothing is sent, and opening an embedded cloud writes its world file), and
 * run while the planner works (./prefetch.ts).
 */
export async function planStack(
  session: StackSession,
  req: PlanRequest,
  emit: Emit = noEmit,
  signal?: AbortSignal,
): Promise<PlannedStack> {
  const read = await session.store.read();
  if (read) rememberSecrets(stateSecrets(read));
  const pending = await session.store.pendingIntents();
  const { stack } = session;
  // What the views hear holds no secret met so far (a policy's name computed from one).
  const userEmit = emit;
  emit = (e) => userEmit(redactValue(e));
  const cloud = await openCloud(stack.provider, {
    stateDir: session.stateDir,
    stackName: stack.name,
    emit,
    callTimeoutMs: req.callTimeoutMs,
    ...(req.rates ? { rates: req.rates } : {}),
  });
  try {
    // Writes an interrupted run left pending are settled first (./settle.ts): what landed is
    // converge's own before anything is planned. Apply saves the settled state before its writes.
    const settlement = pending.length
      ? await settleIntents(pending, read, stack.name, cloud.port, undefined, signal)
      : { ...NOTHING_PENDING, state: read };
    const stored = settlement.state;
    // Project numbers → IDs first (no call when the stack and state write IDs): every name the
    // plan reads or claims is then the ID's (./project-ids.ts).
    const uses = knownProjectNumbers(stack, stored);
    let ids = await resolveProjectNumbers(cloud.port, uses.keys(), undefined, signal, uses);
    let made = await planWith(session, stored, ids, cloud, req, emit, signal, settlement);
    // A name computed while planning (from an input or a data source) may spell a project by a
    // number not met before: resolved, the plan is made again with it.
    const late = lateProjectNumbers(made.result.plan, ids);
    if (late.size && !signal?.aborted) {
      ids = await resolveProjectNumbers(cloud.port, late, ids, signal);
      made = await planWith(session, stored, ids, cloud, req, emit, signal, settlement);
    }
    // Claims other stacks recorded with a project's number are compared as its ID's.
    const claimIds = await claimProjectIds(session.store, cloud.port, ids, signal);
    return await finishPlan(session, made.result, made.prior, cloud, claimIds, settlement);
  } catch (e) {
    await cloud.close();
    throw e;
  }
}

/** One plan of the stack from `stored` (its objects named by project ID), its reads started
 *  ahead (./prefetch.ts). */
async function planWith(
  session: StackSession,
  stored: State | undefined,
  ids: ProjectIds,
  cloud: OpenCloud,
  req: PlanRequest,
  emit: Emit,
  signal: AbortSignal | undefined,
  settlement: Settlement,
): Promise<{ result: PlanResult; prior: State | undefined }> {
  const own = settlement.own;
  const { stack } = session;
  const prior = priorWithProjectIds(stored, ids);
  const prefetch = prefetching(cloud.port, req.parallelism, signal, settlement.reads);
  // The planner's own reads wait on the prefetch's signal too: one signal for all of them.
  const planSignal = signal ? prefetch.signal : undefined;
  try {
    const ahead: PolicyRef[] = [];
    // Each read ahead is one call the run will make: the client hears of them before they go out.
    const calls = (n: number) => cloud.client.expectRequests(n);
    await prefetch.start(
      recorded(
        readAheadPolicies(stack, prior, { refresh: req.refresh, destroy: req.destroy, projectIds: ids }),
        ahead,
        calls,
      ),
    );
    const result = await plan(
      stack,
      prior,
      prefetch.port,
      {
        refresh: req.refresh,
        destroy: req.destroy,
        targets: req.targets,
        replace: req.replace,
        parallelism: req.parallelism,
        strict: req.strict === true,
        target: cloud.target,
        readAhead: ahead,
        projectIds: ids,
        workspace: session.workspace,
        ...(session.rules ? { guardrails: session.rules } : {}),
        ...(own.length ? { ownGrants: own } : {}),
        ...(planSignal ? { signal: planSignal } : {}),
      },
      emit,
    );
    return { result, prior };
  } finally {
    prefetch.dispose();
  }
}

/** The items of `items`, each also pushed to `into` as it is taken (`counted` hears how many so far). */
function* recorded<T>(items: Iterable<T>, into: T[], counted: (n: number) => void): Generator<T> {
  for (const x of items) {
    counted(into.push(x));
    yield x;
  }
}

/** What the plan's target adds when CLOUDNATIVE_EMULATOR_HOST sent its calls elsewhere than the
 *  stack's endpoint says (every view shows the target first, failed plans too). */
function endpointOverride(stack: StackModel, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const host = env[EMULATOR_HOST_ENV];
  if (!host || stack.provider.endpoint === `http://${withoutCredentials(host)}`) return undefined;
  return `, instead of the stack's endpoint (${stack.provider.endpoint})`;
}

/** The plan as shown and saved (warnings of loading, inputs' hash, secrets scrubbed), once no
 *  other stack's claim stands in its way. */
async function finishPlan(
  session: StackSession,
  result: PlanResult,
  prior: State | undefined,
  cloud: OpenCloud,
  projectIds: ProjectIds,
  settlement: Settlement,
): Promise<PlannedStack> {
  // The plan records every warning found for it, those of loading and of settling pending writes
  // included: `show PLANFILE` renders it (the access summary counts lint warnings) from the plan alone.
  const settled = settlement.diagnostic ? [settlement.diagnostic] : [];
  result.plan.diagnostics = [...session.warnings, ...settled, ...result.plan.diagnostics];
  result.diagnostics = [...settled, ...result.diagnostics];
  const overridden = endpointOverride(session.stack);
  if (overridden && result.plan.target) result.plan.target += overridden;
  // Another stack's (or workspace's) claim on what this plan manages: an error, before any write.
  await checkClaims(session.store, result.plan, projectIds);
  if (session.stack.config.size) result.plan.inputs_hash = inputsHash(session.stack.config);
  // Which state the plan was made from: `apply FILE` refuses it for any other.
  result.plan.backend = session.stateIdentity;
  // The state's secrets too: a targeted plan resolves no output, and the state's secret outputs are in it.
  const secrets = secretList([...result.secrets].concat(prior ? stateSecrets(prior) : []));
  rememberSecrets(secrets);
  const shown = redactPlan(result.plan, secrets);
  return {
    ...result,
    plan: shown,
    real: result.plan,
    secrets,
    diagnostics: scrub(result.diagnostics, secrets),
    prior,
    settlement,
    cloud,
    projectIds,
    close: () => cloud.close(),
  };
}
