// Pulumi's `StackReference`: another stack's outputs, read from its state while the program runs.
// Pulumi's project is converge's stack and Pulumi's stack is converge's workspace, so
// "org/project/stack" (or "project/stack", or "stack" for a workspace of this program's stack)
// names the state the stack's own backend keeps for that stack and workspace: the file beside the
// stack file (state/{project}.json, state/{project}.{workspace}.json) or PostgreSQL's rows. An
// output recorded as sensitive stays secret.
import { UserError } from "../diagnostics/diagnostic.js";
import { openStateStore } from "../state/factory.js";
import type { State } from "../generated/schemas.js";
import { DEFAULT_WORKSPACE } from "../state/workspace.js";
import { currentProgram, type ProgramBuilder } from "./context.js";
import type { CallSite } from "./call-site.js";
import { type Input, knownDeep, output, type Output, secret } from "./output.js";

/** Pulumi's details of an output: `secretValue` for a secret one, else `value`. */
export interface StackReferenceOutputDetails {
  value?: unknown;
  secretValue?: unknown;
}

/** The converge stack and workspace a Pulumi stack name stands for. */
function parseName(text: string, current: string): { stack: string; workspace: string } | undefined {
  const parts = text.split("/");
  if (parts.some((p) => !p) || parts.length > 3) return undefined;
  if (parts.length === 1) return { stack: current, workspace: parts[0]! };
  return { stack: parts.at(-2)!, workspace: parts.at(-1)! };
}

export class StackReference {
  /** The name as given. */
  readonly name: Output<string>;
  /** Every output of the stack (secret when one of them is). */
  readonly outputs: Output<Record<string, unknown>>;
  private readonly program: ProgramBuilder;
  private readonly state: Promise<State | undefined>;
  private readonly label: string;

  constructor(name: Input<string>, args?: { name?: Input<string> }, _opts?: object) {
    const program = currentProgram("new StackReference()");
    this.program = program;
    const site = program.siteOfCaller();
    const given = knownDeep(args?.name ?? name)?.value;
    this.label = String(given);
    this.name = output(this.label);
    const target = typeof given === "string" ? parseName(given, program.stack.name) : undefined;
    if (!target) {
      const detail =
        'Name it "org/project/stack" (project: the converge stack; stack: its workspace), "project/stack" or "stack".';
      const summary = `StackReference "${this.label}": not a stack name known while the program runs`;
      throw new UserError(program.errorAt(site, summary, detail));
    }
    this.state = this.read(target, site);
    program.waitFor(this.state);
    this.outputs = this.valueOf(undefined, site, false) as Output<Record<string, unknown>>;
  }

  private async read(
    target: { stack: string; workspace: string },
    site: CallSite | undefined,
  ): Promise<State | undefined> {
    const p = this.program;
    const where = `stack "${target.stack}" workspace "${target.workspace}"`;
    try {
      const opened = openStateStore({
        stackFile: p.file,
        stackName: target.stack,
        workspace: target.workspace,
        ...(p.stack.backend ? { backend: p.stack.backend } : {}),
        ...(p.backendType ? { backendType: p.backendType } : {}),
      });
      const state = await opened.store.read();
      if (state) return state;
      const inWorkspace = target.workspace === DEFAULT_WORKSPACE ? "" : ` in workspace ${target.workspace}`;
      const detail = `${opened.store.describe()} holds no state: apply that stack${inWorkspace} first.`;
      p.diagnostics.push(p.errorAt(site, `StackReference "${this.label}": ${where} has no state`, detail));
    } catch (e) {
      const detail = e instanceof UserError ? e.diagnostics.map((d) => d.summary).join("; ") : (e as Error).message;
      p.diagnostics.push(p.errorAt(site, `StackReference "${this.label}": cannot read the state of ${where}`, detail));
    }
    return undefined;
  }

  /** One output (`key`), or all of them (undefined); a missing one is undefined, or an error when required. */
  private valueOf(key: string | undefined, site: CallSite | undefined, required: boolean): Output<unknown> {
    const p = this.program;
    const details = this.state.then((state) => {
      if (!state) return undefined;
      const sensitive = new Set(state.sensitive_outputs ?? []);
      if (key === undefined) return { value: state.outputs, secret: sensitive.size > 0 };
      if (Object.hasOwn(state.outputs, key)) return { value: state.outputs[key], secret: sensitive.has(key) };
      if (required) {
        const known = Object.keys(state.outputs).sort().join(", ") || "none";
        const summary = `StackReference "${this.label}" has no output "${key}"`;
        p.diagnostics.push(p.errorAt(site, summary, `Its outputs: ${known}.`));
      }
      return undefined;
    });
    p.waitFor(details);
    return output(details.then((d) => (d?.secret ? secret(d.value) : output(d?.value))));
  }

  /** An output of the stack; undefined when it has none of that name (as in Pulumi). */
  getOutput(name: Input<string>): Output<unknown> {
    return this.valueOf(this.key(name), this.program.siteOfCaller(), false);
  }

  /** An output of the stack; a missing one is an error at this call. */
  requireOutput(name: Input<string>): Output<unknown> {
    return this.valueOf(this.key(name), this.program.siteOfCaller(), true);
  }

  /** The value of an output, now: a secret one as `secretValue`. */
  async getOutputDetails(name: string): Promise<StackReferenceOutputDetails> {
    const state = await this.state;
    if (!state || !Object.hasOwn(state.outputs, name)) return {};
    const value = state.outputs[name];
    return (state.sensitive_outputs ?? []).includes(name) ? { secretValue: value } : { value };
  }

  /** The value of an output, now (Pulumi's getOutputValue). */
  async getOutputValue(name: string): Promise<unknown> {
    const d = await this.getOutputDetails(name);
    return d.value ?? d.secretValue;
  }

  private key(name: Input<string>): string {
    const k = knownDeep(name)?.value;
    if (typeof k === "string") return k;
    const site = this.program.siteOfCaller();
    const summary = `StackReference "${this.label}": an output's name must be a string known while the program runs`;
    throw new UserError(this.program.errorAt(site, summary));
  }
}
