// The Automation API: drive plan and apply from a program, as the CLI does, through the same
// engine session (src/engine/session.ts): `Stack.fromFile("stack.yaml" | "stack.ts")` or
// `Stack.inline(name, program)`, then `plan()` → the Plan value, `apply(plan)`, `destroy()`,
// `outputs()`, `import()`. User errors are thrown as `UserError` (their diagnostics as values),
// cloud errors as `CloudError` (with their status).
import { join, resolve } from "node:path";
import { UserError } from "../diagnostics/diagnostic.js";
import type { ApplyResult } from "../apply/executor.js";
import type { Plan } from "../generated/schemas.js";
import { applyPlan, openStackFile, type PlannedStack, planStack, sessionOf, type StackSession, withStateLock } from "../engine/session.js";
import { importResource } from "../engine/import.js";
import type { Emit } from "../engine/events.js";
import type { BackendType } from "../state/factory.js";
import { callSiteIn } from "./call-site.js";
import { loadProgram, type Program } from "./program.js";

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
}

export interface PlanOptions {
  onEvent?: Emit;
  signal?: AbortSignal;
  destroy?: boolean;
  refresh?: boolean;
  targets?: string[];
  replace?: string[];
}

export interface ApplyOptions {
  onEvent?: Emit;
  signal?: AbortSignal;
}

export class Stack {
  /** The plans this stack made, with what applying them needs (policies read, prior state, cloud). */
  private readonly planned = new WeakMap<Plan, PlannedStack>();

  private constructor(
    private readonly session: StackSession,
    private readonly opts: StackOptions,
  ) {}

  /** A YAML stack or a program stack file. */
  static async fromFile(file: string, opts: StackOptions = {}): Promise<Stack> {
    return new Stack(await openStackFile({ file, ...requestOf(opts) }), opts);
  }

  /** A program given as a function; diagnostics point into the file that calls `inline`. */
  static async inline(name: string, program: Program, opts: StackOptions = {}): Promise<Stack> {
    const caller = callSiteIn(undefined)?.file ?? resolve("inline.ts");
    const state = opts.state ?? join(resolve(opts.dir ?? "."), "state", `${name}.json`);
    const loaded = await loadProgram(program, caller, name, { strict: opts.strict === true, state, ...(opts.callTimeoutMs ? { callTimeoutMs: opts.callTimeoutMs } : {}) });
    return new Stack(sessionOf(loaded, { ...requestOf(opts), state }), opts);
  }

  get name(): string {
    return this.session.stack.name;
  }

  /** Warnings found while loading (lint among them). */
  get warnings() {
    return this.session.warnings;
  }

  /** Plans (holding no lock, as `converge plan`); the Plan is the value `plan --out` saves. */
  async plan(o: PlanOptions = {}): Promise<Plan> {
    const req = { refresh: o.refresh !== false, destroy: o.destroy === true, targets: o.targets ?? [], replace: o.replace ?? [], parallelism: this.parallelism, callTimeoutMs: this.opts.callTimeoutMs ?? 120_000, strict: this.opts.strict === true };
    const planned = await planStack(this.session, req, o.onEvent, o.signal);
    this.planned.set(planned.plan, planned);
    if (planned.plan.errored) await planned.close();
    return planned.plan;
  }

  /** Applies a plan this stack made, holding the state lock. A state written since the plan was
   *  made is not overwritten (the store's compare-and-swap refuses the first save). */
  async apply(plan: Plan, o: ApplyOptions = {}): Promise<ApplyResult> {
    const planned = this.planned.get(plan);
    if (!planned) throw new UserError({ severity: "error", summary: "apply takes a plan made by this Stack's plan()", detail: "Plan again with stack.plan() and apply that plan." });
    this.planned.delete(plan);
    if (plan.errored) throw new UserError(plan.diagnostics.filter((d) => d.severity === "error"));
    try {
      return await withStateLock(this.session.store, plan.options.destroy ? "destroy" : "apply", this.opts.lockTimeoutMs, () =>
        applyPlan(this.session, planned, { parallelism: this.parallelism, ...(o.onEvent ? { emit: o.onEvent } : {}), ...(o.signal ? { signal: o.signal } : {}) }),
      );
    } finally {
      await planned.close();
    }
  }

  /** Plans the destruction of every resource and applies it. */
  async destroy(o: ApplyOptions = {}): Promise<ApplyResult> {
    return this.apply(await this.plan({ ...o, destroy: true }), o);
  }

  /** The stack's outputs as the state has them. */
  async outputs(): Promise<Record<string, unknown>> {
    return (await this.session.store.read())?.outputs ?? {};
  }

  /** Adopts the existing grant `id` into the state as the stack's resource `address`. */
  async import(address: string, id: string, o: { onEvent?: Emit } = {}): Promise<{ id: string; serial: number }> {
    return withStateLock(this.session.store, "import", this.opts.lockTimeoutMs, () => importResource(this.session, address, id, { callTimeoutMs: this.opts.callTimeoutMs ?? 120_000, ...(o.onEvent ? { emit: o.onEvent } : {}) }));
  }

  private get parallelism(): number {
    return this.opts.parallelism ?? 10;
  }
}

function requestOf(o: StackOptions) {
  return { ...(o.state !== undefined ? { state: o.state } : {}), ...(o.backend !== undefined ? { backend: o.backend } : {}), ...(o.workspace !== undefined ? { workspace: o.workspace } : {}), strict: o.strict === true, ...(o.callTimeoutMs ? { callTimeoutMs: o.callTimeoutMs } : {}) };
}
