// The operations of converge, each written once for every front end: the CLI's commands and the
// Automation API (src/automation/automation.ts) call these, and only these, to plan, apply, apply a plan
// made before, destroy and refresh. Each fixes the order of its steps and holds the state lock
// the same way whoever calls it: a plan takes no lock; every operation that writes the state takes
// it before it reads the state and keeps it until its last write. What differs between front ends
// comes in as hooks: how an interrupt stops a phase (Controls), what is shown and who approves
// (Hooks). Hooks receive the plan as it may be shown (secrets redacted) and never the open cloud.
import type { ApplyResult } from "../apply/executor.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Plan, State } from "../generated/schemas.js";
import { type PlannedPolicy, plannedPolicies } from "../plan/access.js";
import { redactState, scrub } from "../config/redact.js";
import { type Emit, noEmit } from "../contracts/events.js";
import {
  checkNotStale,
  checkSameChanges,
  checkSameInputs,
  checkSameState,
  checkStackName,
} from "./saved-plan-checks.js";
import { type PlannedStack, type PlanRequest, planStack, type StackSession, withStateLock } from "./session.js";
import { applyPlan, saveRefreshed, saveSettlement } from "./session-apply.js";
import { type ChangeCounts, ChangeTally } from "./tally.js";
import { importResource, importTarget, type ImportRequest } from "./import.js";
import { approvedRules, checkSameRules, enforceGuardrails } from "../guardrails/enforce.js";

/** What stopped a phase early: an interrupt (Ctrl-C, a signal, a closed output) or a deadline. */
export type Stopped = false | "signal" | "timeout";

/** A plan as the front ends may show it: no secret in it, and no handle on the cloud. */
export interface ShownPlan {
  plan: Plan;
  /** Diagnostics of the planning (the plan's own list also has the loading warnings). */
  diagnostics: Diagnostic[];
  /** The state the plan was made from, secrets redacted (undefined: none yet). */
  state(): State | undefined;
  /** Each policy the apply writes, before and after (read from the cloud while planning), secrets
   *  redacted: what `details` at a prompt shows. Computed when asked. */
  policies(): PlannedPolicy[];
}

/** How a front end stops a phase: the CLI catches Ctrl-C (and its --timeout) there; the
 *  Automation API passes its caller's AbortSignal. Absent: the phase runs to its end. */
export interface Controls {
  planning?<T>(run: (signal: AbortSignal | undefined) => Promise<T>): Promise<{ value: T; stopped: Stopped }>;
  applying?<T>(run: (signal: AbortSignal | undefined) => Promise<T>): Promise<{ value: T; stopped: Stopped }>;
  /** Called just before the first cloud write may start; it may throw (or never return) to stop. */
  beforeApply?(): Promise<void>;
  /** How long to wait for the state lock (default: fail at once when another holds it). */
  lockTimeoutMs?: number;
}

/** What a front end shows and decides along an operation. */
export interface Hooks {
  /** The engine's events (progress, retries, each change's start and end), secrets scrubbed. */
  emit?: Emit;
  /** The plan is made: its diagnostics and, unless it has errors, its changes. */
  planned?(shown: ShownPlan): Promise<void>;
  /** A plan made before was made again and matches it. */
  replanned?(shown: ShownPlan): Promise<void>;
  /** Whether to apply; absent: approved (the caller approved before asking, as --auto-approve). */
  approve?(shown: ShownPlan, destroy: boolean): Promise<boolean>;
  /** The plan had nothing to apply: no approval was asked, nothing ran. */
  unchanged?(shown: ShownPlan, destroy: boolean): Promise<void>;
  /** The apply starts; its progress follows as events. */
  applying?(plan: Plan): void;
}

/** How an operation that may apply ended. */
export type Outcome =
  | { kind: "stopped"; plan?: Plan; how: Exclude<Stopped, false> }
  | { kind: "errored"; plan: Plan }
  | { kind: "unchanged"; plan: Plan }
  | { kind: "cancelled"; plan: Plan }
  | { kind: "applied"; plan: Plan; result: ApplyResult; counts: ChangeCounts; stopped: Stopped; destroy: boolean };

const unstopped: Required<Pick<Controls, "planning">>["planning"] = async (run) => ({
  value: await run(undefined),
  stopped: false,
});

/** The planning step of every operation: the stack planned as the front end stops it. */
function planPhase(session: StackSession, request: PlanRequest, hooks: Hooks, controls: Controls) {
  const planning = controls.planning ?? unstopped;
  return planning((signal) => planStack(session, request, hooks.emit ?? noEmit, signal));
}

function shownOf(planned: PlannedStack): ShownPlan {
  const { plan, live, secrets } = planned;
  const policies = () =>
    plannedPolicies(plan.resource_changes, live, plan.options.refresh).policies.map((p) => ({
      ...p,
      before: scrub(p.before, secrets),
      after: scrub(p.after, secrets),
    }));
  return {
    plan,
    diagnostics: planned.diagnostics,
    // Redacted when asked (a walk of the whole state): only a view that shows it asks.
    state: () => (planned.prior ? redactState(planned.prior) : undefined),
    policies,
  };
}

/** Plans (no lock, no write): the plan as it may be shown, the cloud closed. */
export async function preview(
  session: StackSession,
  request: PlanRequest,
  hooks: Hooks = {},
  controls: Controls = {},
): Promise<{ shown: ShownPlan; stopped: Stopped }> {
  const { value: planned, stopped } = await planPhase(session, request, hooks, controls);
  await planned.close();
  return { shown: shownOf(planned), stopped };
}

/** `apply` and `destroy`: under the state lock, plan, show, ask, apply. */
export function planAndApply(
  session: StackSession,
  request: PlanRequest,
  hooks: Hooks = {},
  controls: Controls = {},
): Promise<Outcome> {
  return withStateLock(session.store, request.destroy ? "destroy" : "apply", controls.lockTimeoutMs, async () => {
    const { value: planned, stopped } = await planPhase(session, request, hooks, controls);
    try {
      if (stopped) return { kind: "stopped", how: stopped };
      const shown = shownOf(planned);
      await hooks.planned?.(shown);
      if (planned.plan.errored) return { kind: "errored", plan: planned.plan };
      // A mandatory rule that fails, or an owner approval missing, refuses the plan before any write.
      enforceGuardrails(planned.plan, request.approval);
      if (!planned.plan.applyable) {
        // Nothing to change, but what settling an interrupted run's writes found is recorded.
        await saveSettlement(session, planned);
        await hooks.unchanged?.(shown, request.destroy);
        return { kind: "unchanged", plan: planned.plan };
      }
      if (hooks.approve && !(await hooks.approve(shown, request.destroy)))
        return { kind: "cancelled", plan: planned.plan };
      return await execute(session, planned, request, hooks, controls);
    } finally {
      await planned.close();
    }
  });
}

/** What `applyMade` checks a plan made before against: where it came from, for messages. */
export interface MadePlan {
  plan: Plan;
  /** How messages name it: the saved plan's file, or "(the plan given to apply)". */
  label: string;
}

/**
 * A plan made before (saved by `plan --out`, or returned by the Automation API's plan()): under
 * the state lock, checked (the same stack, state and inputs, and the state unchanged since), made
 * again with its options and applied only when it makes the same grant changes. The cloud is
 * read again: the plan carries no open handle and no secret.
 */
export function applyMade(
  session: StackSession,
  made: MadePlan,
  request: Omit<PlanRequest, "refresh" | "destroy" | "targets" | "replace">,
  hooks: Hooks = {},
  controls: Controls = {},
): Promise<Outcome> {
  const { plan: saved, label } = made;
  checkStackName(saved, label, session.stack.name, session.stack.file);
  checkSameState(saved, label, session.stateIdentity);
  checkSameInputs(saved, label, session.stack.config);
  checkSameRules(saved, label, session.rules?.digest);
  return withStateLock(session.store, "apply", controls.lockTimeoutMs, async () => {
    checkNotStale(saved, label, await session.store.read());
    const { destroy, refresh, targets, replace } = saved.options;
    const full: PlanRequest = { ...request, destroy, refresh, targets, replace };
    const { value: planned, stopped } = await planPhase(session, full, hooks, controls);
    try {
      if (stopped) return { kind: "stopped", how: stopped };
      if (planned.plan.errored) {
        await hooks.planned?.(shownOf(planned));
        return { kind: "errored", plan: planned.plan };
      }
      checkSameChanges(saved, label, planned.plan);
      enforceGuardrails(planned.plan, request.approval);
      await hooks.replanned?.(shownOf(planned));
      return await execute(session, planned, full, hooks, controls);
    } finally {
      await planned.close();
    }
  });
}

/** Applies `planned` (holding the lock): the events and the result scrubbed of its secrets. */
async function execute(
  session: StackSession,
  planned: PlannedStack,
  request: PlanRequest,
  hooks: Hooks,
  controls: Controls,
): Promise<Outcome> {
  await controls.beforeApply?.();
  const tally = new ChangeTally(planned.plan);
  hooks.applying?.(planned.plan);
  const emit: Emit = (e) => {
    tally.onEvent(e);
    hooks.emit?.(scrub(e, planned.secrets));
  };
  const applying = controls.applying ?? unstopped;
  const approvals = approvedRules(planned.plan, request.approval);
  const req = { parallelism: request.parallelism, emit, ...(approvals.length ? { approvals } : {}) };
  const run = (signal: AbortSignal | undefined) =>
    applyPlan(session, planned, { ...req, ...(signal ? { signal } : {}) });
  const { value: result, stopped } = await applying(run);
  return {
    kind: "applied",
    plan: planned.plan,
    result: scrub(result, planned.secrets),
    counts: tally.counts,
    stopped,
    destroy: request.destroy,
  };
}

/** `refresh`: under the state lock, the state's resources as the live cloud has them; no cloud
 *  write. `written` is undefined when there is no state yet. */
export function refresh(
  session: StackSession,
  request: Omit<PlanRequest, "refresh" | "destroy" | "targets" | "replace">,
  hooks: Hooks = {},
  controls: Controls = {},
): Promise<{ shown: ShownPlan; stopped: Stopped; written?: State }> {
  return withStateLock(session.store, "refresh", controls.lockTimeoutMs, async () => {
    const full: PlanRequest = { ...request, refresh: true, destroy: false, targets: [], replace: [] };
    const { value: planned, stopped } = await planPhase(session, full, hooks, controls);
    await planned.close();
    const shown = shownOf(planned);
    if (stopped || planned.plan.errored) return { shown, stopped };
    await controls.beforeApply?.();
    const written = await saveRefreshed(session, planned);
    return written ? { shown, stopped, written } : { shown, stopped };
  });
}

/** `import ADDRESS ID`: the address and ID checked, then under the state lock the grant read and
 *  recorded in the state (nothing is written to the cloud). */
export function importGrant(
  session: StackSession,
  address: string,
  id: string,
  request: ImportRequest,
  controls: Controls = {},
): Promise<{ id: string; serial: number }> {
  importTarget(session, address, id);
  return withStateLock(session.store, "import", controls.lockTimeoutMs, () =>
    importResource(session, address, id, request),
  );
}
