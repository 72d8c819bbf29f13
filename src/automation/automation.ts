// The Automation API: drive plan and apply from a program, as the CLI does, through the same
// operations (src/engine/operations.ts), with the same state lock: `Stack.fromFile("stack.yaml" |
// "stack.ts")` or `Stack.inline(name, program)`, then `plan()` → the Plan value, `apply(plan)`,
// `up()`, `destroy()`, `refresh()`, `outputs()`, `import()`. User errors are thrown as `UserError`
// (their diagnostics as values), cloud errors as `CloudError` (with their status). Nothing stays
// open between calls: a script that only plans exits by itself. ./workspace.ts shapes it as
// Pulumi's LocalWorkspace.
import { isAbsolute, join, resolve } from "node:path";
import { UserError } from "../diagnostics/diagnostic.js";
import type { ApplyResult } from "../apply/executor.js";
import type { Plan } from "../generated/schemas.js";
import { openStackFile, type PlanRequest, sessionOf, type StackSession } from "../engine/session.js";
import {
  applyMade,
  type Controls,
  type Hooks,
  importGrant,
  type Outcome,
  planAndApply,
  preview,
  refresh,
  type ShownPlan,
  type Stopped,
} from "../engine/operations.js";
import type { Emit } from "../contracts/events.js";
import type { GivenInputs } from "../config/inputs.js";
import type { BackendType } from "../state/factory.js";
import { newState } from "../state/index.js";
import { actorOf } from "../state/postgres/history.js";
import { callSiteIn } from "../sdk/call-site.js";
import { loadProgram, type Program } from "../sdk/program.js";

export interface StackOptions {
  /** An explicit local state file; default: state/{name}.json beside the stack file (an inline
   *  program: in `dir`). */
  state?: string;
  /** An inline program's directory: its state and relative seed paths are there (default: the current directory). */
  dir?: string;
  backend?: BackendType;
  /** The workspace (else CONVERGE_WORKSPACE, else the selected one, else default). */
  workspace?: string;
  /** Lint warnings are errors. */
  strict?: boolean;
  /** Concurrent cloud calls (default 10). */
  parallelism?: number;
  /** Deadline of each cloud call, retries included (default 2 minutes). */
  callTimeoutMs?: number;
  /** How long to wait for the state lock (default: not at all). */
  lockTimeoutMs?: number;
  /** Values of the stack's inputs (as --var gives them). */
  inputs?: GivenInputs;
  /** Creates `workspace` when it does not exist yet (as Pulumi's createOrSelectStack). */
  createWorkspace?: boolean;
  /** An inline program's file for diagnostics (default: the file that calls `inline`). */
  caller?: string;
  /** Guardrail rules files (as --policy); default: CONVERGE_POLICY's files. */
  policyFiles?: string[];
}

/** Owner-approval guardrails approved, as the CLI's `--approve RULE` with CONVERGE_ACTOR. */
export interface ApprovalOptions {
  /** The owner-approval rules approved (each as `--approve RULE`). */
  approveRules?: string[];
  /** Who approves; default: CONVERGE_ACTOR, else the OS user (as the CLI). */
  actor?: string;
}

export interface PlanOptions extends ApprovalOptions {
  onEvent?: Emit;
  signal?: AbortSignal;
  /** up() and destroy(): asked with the plan, holding the state lock, before anything is applied
   *  (as the CLI's prompt is); false applies nothing. Absent: approved. */
  approve?: (plan: Plan) => boolean | Promise<boolean>;
  destroy?: boolean;
  refresh?: boolean;
  targets?: string[];
  replace?: string[];
}

export interface ApplyOptions extends ApprovalOptions {
  onEvent?: Emit;
  signal?: AbortSignal;
}

/** Controls of an operation stopped by the caller's AbortSignal. */
function controlsOf(signal: AbortSignal | undefined, lockTimeoutMs: number | undefined): Controls {
  const stopped = (): Stopped => (signal?.aborted ? "signal" : false);
  const phase = async <T>(run: (s: AbortSignal | undefined) => Promise<T>) => {
    const value = await run(signal);
    return { value, stopped: stopped() };
  };
  return { planning: phase, applying: phase, ...(lockTimeoutMs !== undefined ? { lockTimeoutMs } : {}) };
}

/** What an operation that may apply returns: its ApplyResult, or the errors that stopped it. */
async function resultOf(outcome: Outcome, state: () => Promise<ApplyResult["state"]>): Promise<ApplyResult> {
  switch (outcome.kind) {
    case "applied":
      return outcome.result;
    case "errored":
      throw new UserError(outcome.plan.diagnostics.filter((d) => d.severity === "error"));
    case "cancelled":
      throw new UserError({ severity: "error", summary: "the apply was not approved: nothing was changed" });
    case "stopped":
    case "unchanged":
      return { state: await state(), failed: [], skipped: [], interrupted: outcome.kind === "stopped" };
  }
}

export class Stack {
  /** The plans this stack made: apply takes only those. */
  private readonly made = new WeakSet<Plan>();

  private constructor(
    private readonly session: StackSession,
    private readonly opts: StackOptions,
  ) {}

  /** A YAML stack or a program stack file. */
  static async fromFile(file: string, opts: StackOptions = {}): Promise<Stack> {
    return Stack.made(await openStackFile({ file, ...requestOf(opts) }), opts);
  }

  private static async made(session: StackSession, opts: StackOptions): Promise<Stack> {
    if (opts.createWorkspace && !(await session.workspaces.exists(session.workspace)))
      await session.workspaces.create(session.workspace);
    return new Stack(session, opts);
  }

  /** A program given as a function; diagnostics point into the file that calls `inline`; its
   *  state, and a relative seed path it names, are in `dir` (default: the current directory). */
  static async inline(name: string, program: Program, opts: StackOptions = {}): Promise<Stack> {
    const caller = opts.caller ?? callSiteIn(undefined)?.file ?? resolve("inline.ts");
    const dir = resolve(opts.dir ?? ".");
    const state = opts.state ?? join(dir, "state", `${name}.json`);
    const loadOpts = {
      strict: opts.strict === true,
      state,
      ...(opts.callTimeoutMs ? { callTimeoutMs: opts.callTimeoutMs } : {}),
      ...(opts.inputs ? { inputs: opts.inputs } : {}),
    };
    const loaded = await loadProgram(seedsIn(program, dir), caller, name, loadOpts);
    return Stack.made(sessionOf(loaded, { ...requestOf(opts), state }), opts);
  }

  get name(): string {
    return this.session.stack.name;
  }

  /** Warnings found while loading (lint among them). */
  get warnings() {
    return this.session.warnings;
  }

  /** Plans (holding no lock, as `converge plan`): the Plan is the value `plan --out` saves, and
   *  nothing stays open once it is made. */
  async plan(o: PlanOptions = {}): Promise<Plan> {
    const { shown } = await preview(
      this.session,
      this.request(o),
      o.onEvent ? { emit: o.onEvent } : {},
      controlsOf(o.signal, undefined),
    );
    this.made.add(shown.plan);
    return shown.plan;
  }

  /** Applies a plan this stack made, as `converge apply FILE` applies a saved one: under the state
   *  lock, refused when the state changed since, planned again with its options and applied only
   *  when that makes the same grant changes. */
  async apply(plan: Plan, o: ApplyOptions = {}): Promise<ApplyResult> {
    if (!this.made.has(plan))
      throw new UserError({
        severity: "error",
        summary: "apply takes a plan made by this Stack's plan()",
        detail: "Plan again with stack.plan() and apply that plan.",
      });
    if (plan.errored) throw new UserError(plan.diagnostics.filter((d) => d.severity === "error"));
    this.made.delete(plan);
    const outcome = await applyMade(
      this.session,
      { plan, label: "(the plan given to apply)" },
      this.request(o),
      o.onEvent ? { emit: o.onEvent } : {},
      controlsOf(o.signal, this.opts.lockTimeoutMs),
    );
    return resultOf(outcome, () => this.state());
  }

  /** Plans and applies under one hold of the state lock (as `converge apply --auto-approve`). */
  async up(o: PlanOptions = {}): Promise<ApplyResult> {
    const approve = o.approve;
    const hooks: Hooks = {
      ...(o.onEvent ? { emit: o.onEvent } : {}),
      ...(approve ? { approve: async (shown: ShownPlan) => approve(shown.plan) } : {}),
    };
    const outcome = await planAndApply(
      this.session,
      this.request(o),
      hooks,
      controlsOf(o.signal, this.opts.lockTimeoutMs),
    );
    return resultOf(outcome, () => this.state());
  }

  /** Plans the destruction of every resource and applies it (as `converge destroy --auto-approve`). */
  async destroy(o: ApplyOptions & Pick<PlanOptions, "approve"> = {}): Promise<ApplyResult> {
    return this.up({ ...o, destroy: true });
  }

  /** The state's resources as the live cloud has them (as `converge refresh`); no cloud write. */
  async refresh(o: ApplyOptions = {}): Promise<{ plan: Plan; state: ApplyResult["state"] | undefined }> {
    const { shown, written } = await refresh(
      this.session,
      this.request({}),
      o.onEvent ? { emit: o.onEvent } : {},
      controlsOf(o.signal, this.opts.lockTimeoutMs),
    );
    if (shown.plan.errored) throw new UserError(shown.plan.diagnostics.filter((d) => d.severity === "error"));
    return { plan: shown.plan, state: written };
  }

  /** The stack's outputs as the state has them. */
  async outputs(): Promise<Record<string, unknown>> {
    return (await this.session.store.read())?.outputs ?? {};
  }

  /** The outputs with whether each is secret (computed from a secret), as Pulumi's `outputs()`. */
  async outputValues(): Promise<Record<string, { value: unknown; secret: boolean }>> {
    const s = await this.session.store.read();
    const secret = new Set(s?.sensitive_outputs ?? []);
    return Object.fromEntries(
      Object.entries(s?.outputs ?? {}).map(([k, value]) => [k, { value, secret: secret.has(k) }]),
    );
  }

  /** Adopts the existing grant `id` into the state as the stack's resource `address`. */
  async import(address: string, id: string, o: { onEvent?: Emit } = {}): Promise<{ id: string; serial: number }> {
    const request = { callTimeoutMs: this.opts.callTimeoutMs ?? 120_000, ...(o.onEvent ? { emit: o.onEvent } : {}) };
    return importGrant(
      this.session,
      address,
      id,
      request,
      this.opts.lockTimeoutMs !== undefined ? { lockTimeoutMs: this.opts.lockTimeoutMs } : {},
    );
  }

  private async state(): Promise<ApplyResult["state"]> {
    return (await this.session.store.read()) ?? newState(this.session.stack.name);
  }

  private request(o: PlanOptions | ApplyOptions): PlanRequest {
    const p: PlanOptions = o;
    return {
      refresh: p.refresh !== false,
      destroy: p.destroy === true,
      targets: p.targets ?? [],
      replace: p.replace ?? [],
      parallelism: this.opts.parallelism ?? 10,
      callTimeoutMs: this.opts.callTimeoutMs ?? 120_000,
      strict: this.opts.strict === true,
      ...(o.approveRules?.length ? { approval: { actor: o.actor ?? actorOf(), rules: o.approveRules } } : {}),
    };
  }
}

/** `program` with a relative `provider.seed` it sets resolved in `dir` (the classic form's
 *  `s.provider = {…}`): an inline program has no file of its own to be relative to. */
function seedsIn(program: Program, dir: string): Program {
  return (s) => {
    let provider = s.provider;
    const set = (p: typeof provider) =>
      p && typeof p.seed === "string" && !isAbsolute(p.seed) ? { ...p, seed: resolve(dir, p.seed) } : p;
    Object.defineProperty(s, "provider", {
      configurable: true,
      enumerable: true,
      get: () => provider,
      set: (p: typeof provider) => (provider = set(p)),
    });
    provider = set(provider);
    return program(s);
  };
}

function requestOf(o: StackOptions) {
  return {
    ...(o.state !== undefined ? { state: o.state } : {}),
    ...(o.backend !== undefined ? { backend: o.backend } : {}),
    ...(o.workspace !== undefined ? { workspace: o.workspace } : {}),
    strict: o.strict === true,
    ...(o.callTimeoutMs ? { callTimeoutMs: o.callTimeoutMs } : {}),
    ...(o.inputs ? { inputs: o.inputs } : {}),
    ...(o.policyFiles ? { policyFiles: o.policyFiles } : {}),
  };
}
