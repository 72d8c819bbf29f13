// The Automation API in the shape Pulumi's users know (`@pulumi/pulumi/automation`): a workspace
// whose stacks are an inline program or a directory holding a stack file, with `setConfig` and
// `getConfig`, `preview`, `up`, `refresh`, `destroy` and `outputs()` as `{value, secret}`, the
// engine's events through `onEvent` and the human lines through `onOutput`. Each operation opens
// the stack afresh (the config set since is its inputs) and closes everything when it ends. Under
// it, ./automation.ts's Stack and the engine's operations, as for the CLI.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { UserError } from "../diagnostics/diagnostic.js";
import type { ApplyResult } from "../apply/executor.js";
import type { InputValue } from "../config/inputs.js";
import type { EngineEvent } from "../contracts/events.js";
import type { Plan } from "../generated/schemas.js";
import { rememberSecrets } from "../config/redact.js";
import { type ApprovalOptions, Stack, type StackOptions } from "./automation.js";
import { callSiteIn } from "../sdk/call-site.js";
import type { Program } from "../sdk/program.js";
import { changeSummary, eventLine, planLines, type OpType } from "./workspace-text.js";

export interface ConfigValue {
  value: string;
  secret?: boolean;
}

export interface OutputValue {
  value: unknown;
  secret: boolean;
}

export type OutputMap = Record<string, OutputValue>;

/** What preview, up, refresh and destroy report as they go. */
export interface OperationOptions extends ApprovalOptions {
  /** Each line of the operation's human output, as the CLI would print it. */
  onOutput?: (line: string) => void;
  /** Each engine event (progress, retries, each change's start and end). */
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
  /** Resources to limit the operation to (their addresses), as --target. */
  target?: string[];
  /** Concurrent cloud calls (default 10). */
  parallel?: number;
}

export interface PreviewResult {
  stdout: string;
  stderr: string;
  changeSummary: Partial<Record<OpType, number>>;
  /** The plan itself: the value `converge plan --out` saves. */
  plan: Plan;
}

export interface UpResult {
  stdout: string;
  stderr: string;
  outputs: OutputMap;
  summary: { result: "succeeded" | "failed"; resourceChanges: Partial<Record<OpType, number>> };
  /** The apply's own result: failed and skipped resources, the state written. */
  result: ApplyResult;
}

export type DestroyResult = Omit<UpResult, "outputs">;

export interface RefreshResult {
  stdout: string;
  stderr: string;
  summary: { result: "succeeded"; resourceChanges: Partial<Record<OpType, number>> };
}

/** An inline program: Pulumi's `{stackName, projectName, program}`. */
export interface InlineProgramArgs {
  stackName: string;
  projectName: string;
  program: Program;
}

/** A directory holding `stack.ts`, `stack.yaml` (or the file named by `stackFile`). */
export interface LocalProgramArgs {
  stackName: string;
  workDir: string;
  stackFile?: string;
}

export interface LocalWorkspaceOptions extends Omit<StackOptions, "inputs" | "workspace" | "dir"> {
  /** Where an inline program's state and relative seed paths are (default: the current directory). */
  workDir?: string;
}

const STACK_FILES = ["stack.ts", "stack.mts", "stack.mjs", "stack.js", "stack.yaml", "stack.yml"];

export class WorkspaceStack {
  private readonly config = new Map<string, ConfigValue>();

  constructor(
    readonly name: string,
    private readonly open: (inputs: InputValue[]) => Promise<Stack>,
    private readonly project: string | undefined,
  ) {}

  /** Sets an input of the stack (`project:key` and `key` are the same key); a secret value is
   *  never printed by converge. */
  async setConfig(key: string, value: ConfigValue): Promise<void> {
    this.config.set(this.keyOf(key), value);
    if (value.secret) rememberSecrets([value.value]);
  }

  async setAllConfig(values: Record<string, ConfigValue>): Promise<void> {
    for (const [k, v] of Object.entries(values)) await this.setConfig(k, v);
  }

  async getConfig(key: string): Promise<ConfigValue> {
    const v = this.config.get(this.keyOf(key));
    if (!v)
      throw new UserError({
        severity: "error",
        summary: `no config value for "${key}"`,
        detail: `Set it with setConfig("${key}", { value }).`,
      });
    return v;
  }

  async getAllConfig(): Promise<Record<string, ConfigValue>> {
    return Object.fromEntries(this.config);
  }

  async removeConfig(key: string): Promise<void> {
    this.config.delete(this.keyOf(key));
  }

  /** Plans (no lock, no write), as `converge plan`. */
  async preview(o: OperationOptions = {}): Promise<PreviewResult> {
    const out = collector(o);
    const stack = await this.stack();
    const plan = await stack.plan({ onEvent: out.event, ...this.planOptions(o) });
    if (plan.errored) throw new UserError(plan.diagnostics.filter((d) => d.severity === "error"));
    for (const line of planLines(plan)) out.line(line);
    return { ...out.texts(), changeSummary: changeSummary(plan), plan };
  }

  /** Plans and applies, as `converge apply --auto-approve`. */
  async up(o: OperationOptions = {}): Promise<UpResult> {
    const out = collector(o);
    const stack = await this.stack();
    const result = await stack.up({ onEvent: out.event, ...this.planOptions(o) });
    return { ...out.texts(), outputs: await stack.outputValues(), summary: summaryOf(result, out.counts()), result };
  }

  /** Updates the state from the live cloud, as `converge refresh` (no cloud write). */
  async refresh(o: OperationOptions = {}): Promise<RefreshResult> {
    const out = collector(o);
    const stack = await this.stack();
    const { plan } = await stack.refresh({ onEvent: out.event, ...(o.signal ? { signal: o.signal } : {}) });
    const drifted = plan.resource_drift?.length ?? 0;
    out.line(`Refreshed: ${drifted} resource${drifted === 1 ? "" : "s"} changed outside converge.`);
    return { ...out.texts(), summary: { result: "succeeded", resourceChanges: { update: drifted } } };
  }

  /** Removes every grant the stack manages, as `converge destroy --auto-approve`. */
  async destroy(o: OperationOptions = {}): Promise<DestroyResult> {
    const out = collector(o);
    const stack = await this.stack();
    const { targets: _targets, ...options } = this.planOptions(o);
    const result = await stack.destroy({ onEvent: out.event, ...options });
    return { ...out.texts(), summary: summaryOf(result, out.counts()), result };
  }

  /** The stack's outputs as the state has them, each with whether it is secret. */
  async outputs(): Promise<OutputMap> {
    return (await this.stack()).outputValues();
  }

  private keyOf(key: string): string {
    return this.project !== undefined && key.startsWith(`${this.project}:`) ? key.slice(this.project.length + 1) : key;
  }

  private stack(): Promise<Stack> {
    const inputs = [...this.config].map(([name, v]): InputValue => ({
      name,
      value: v.value,
      text: true,
      source: { kind: "flag", flag: "--var", name },
    }));
    return this.open(inputs);
  }

  private planOptions(o: OperationOptions) {
    const approval = o.approveRules ? { approveRules: o.approveRules, ...(o.actor ? { actor: o.actor } : {}) } : {};
    return { ...(o.signal ? { signal: o.signal } : {}), ...(o.target ? { targets: o.target } : {}), ...approval };
  }
}

/** The lines and counts an operation reports, to `onOutput` as they come and in its result. */
function collector(o: OperationOptions) {
  const lines: string[] = [];
  const done: Partial<Record<OpType, number>> = {};
  const line = (text: string) => {
    lines.push(text);
    o.onOutput?.(`${text}\n`);
  };
  const event = (e: EngineEvent) => {
    o.onEvent?.(e);
    if (e.type === "step" && e.phase === "done") {
      const op: OpType =
        e.action === "create"
          ? "create"
          : e.action === "delete"
            ? "delete"
            : e.action === "replace"
              ? "replace"
              : e.action === "import"
                ? "import"
                : "update";
      done[op] = (done[op] ?? 0) + 1;
    }
    const text = eventLine(e);
    if (text !== undefined) line(text);
  };
  return {
    line,
    event,
    counts: () => done,
    texts: () => ({ stdout: lines.map((l) => `${l}\n`).join(""), stderr: "" }),
  };
}

function summaryOf(result: ApplyResult, changes: Partial<Record<OpType, number>>) {
  return {
    result: result.failed.length || result.interrupted ? ("failed" as const) : ("succeeded" as const),
    resourceChanges: changes,
  };
}

export const LocalWorkspace = {
  /**
   * A stack of an inline program (`{stackName, projectName, program}`) or of a directory holding a
   * stack file (`{stackName, workDir}`). Pulumi's project is converge's stack (an inline program's
   * `projectName` names it; a stack file names itself) and Pulumi's stack is converge's workspace
   * (`stackName`, created when missing): `dev` and `prod` of one program keep a state each.
   * Nothing is read until an operation runs.
   */
  async createOrSelectStack(
    args: InlineProgramArgs | LocalProgramArgs,
    opts: LocalWorkspaceOptions = {},
  ): Promise<WorkspaceStack> {
    const { workDir, ...rest } = opts;
    const base: StackOptions = { ...rest, workspace: args.stackName, createWorkspace: true };
    if ("program" in args) {
      // Diagnostics point into the file that made the workspace stack, as Stack.inline's do.
      const caller = callSiteIn(undefined)?.file;
      const dir = resolve(workDir ?? ".");
      const open = (inputs: InputValue[]) =>
        Stack.inline(args.projectName, args.program, {
          ...base,
          dir,
          inputs: { vars: inputs, files: [], env: [] },
          ...(caller ? { caller } : {}),
        });
      return new WorkspaceStack(args.stackName, open, args.projectName);
    }
    const file = args.stackFile
      ? resolve(args.workDir, args.stackFile)
      : STACK_FILES.map((f) => join(resolve(args.workDir), f)).find((f) => existsSync(f));
    if (!file)
      throw new UserError({
        severity: "error",
        summary: `no stack file in ${args.workDir}`,
        detail: `converge looks for ${STACK_FILES.join(", ")}.`,
      });
    const open = (inputs: InputValue[]) =>
      Stack.fromFile(file, { ...base, inputs: { vars: inputs, files: [], env: [] } });
    return new WorkspaceStack(args.stackName, open, undefined);
  },
  createStack(args: InlineProgramArgs | LocalProgramArgs, opts: LocalWorkspaceOptions = {}): Promise<WorkspaceStack> {
    return LocalWorkspace.createOrSelectStack(args, opts);
  },
  selectStack(args: InlineProgramArgs | LocalProgramArgs, opts: LocalWorkspaceOptions = {}): Promise<WorkspaceStack> {
    return LocalWorkspace.createOrSelectStack(args, opts);
  },
};
