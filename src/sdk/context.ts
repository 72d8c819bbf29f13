// The stack document a program builds while it runs: the same shape a YAML stack parses to
// (name, provider, variables with fn::invoke, resources, outputs), with the call site of each
// part. The loader (src/config/load.ts loadStackDocument) then checks it like a YAML stack.
import { AsyncLocalStorage } from "node:async_hooks";
import { type Diagnostic, error, UserError, warning } from "../diagnostics/diagnostic.js";
import { diagnosticLines } from "../diagnostics/diagnostic-lines.js";
import { toPlain } from "../diagnostics/lines.js";
import type { Position } from "../yaml/source.js";
import { pathKey } from "../config/program-source.js";
import { type GivenInputs, NO_INPUTS } from "../config/inputs.js";
import type { ProviderConfig, BackendConfig } from "../generated/schemas.js";
import type { BackendType } from "../state/backend-types.js";
import { type CallSite, callSiteIn } from "./call-site.js";
import { encode, onUnknownApply, settled } from "./output.js";
import { DEFERRED_APPLY } from "./deferred.js";

/** Reads a function's result at once (the direct form of an invoke). */
export type DirectReader = (
  token: string,
  args: Record<string, unknown>,
  site: CallSite | undefined,
) => Promise<Record<string, unknown>>;

/** What a program's default export receives. */
export interface StackContext {
  name: string;
  description?: string;
  provider: ProviderConfig;
  backend?: BackendConfig;
  lint?: Record<string, boolean>;
  /** A stack output (`outputs:` of a YAML stack). */
  export(name: string, value: unknown): void;
}

export class ProgramBuilder {
  readonly variables: Record<string, unknown> = {};
  readonly resources: Record<string, unknown> = {};
  readonly outputs: Record<string, unknown> = {};
  readonly inputs: Record<string, Record<string, unknown>> = {};
  readonly moved: { from: string; to: string }[] = [];
  /** Guardrail rules and built-in settings (`policies:` of a YAML stack). */
  readonly rules: unknown[] = [];
  readonly builtins: Record<string, unknown> = {};
  readonly positions = new Map<string, Position>();
  readonly diagnostics: Diagnostic[] = [];
  readonly stack: StackContext;
  private readonly names = new Map<string, CallSite | undefined>();
  /** Set once the default export has settled: the stack is what it declared by then. */
  private settled = false;
  private readonly refusedAt = new Set<string>();
  /** Reads the program started that the stack waits for (a StackReference's state). */
  private readonly waits: Promise<unknown>[] = [];
  /** --backend: where a StackReference reads another stack's state (else the stack's backend:). */
  backendType?: BackendType;

  constructor(
    /** The program's file: positions are taken from its frames. */
    readonly file: string,
    name: string,
    readonly read: DirectReader,
    /** The values given for the stack's inputs (`Config` reads them). */
    readonly given: GivenInputs = NO_INPUTS,
    /** Whether an output-form invoke whose arguments are known is read while the program runs. */
    readonly readsNow = false,
  ) {
    const outputs = this.outputs;
    this.stack = {
      name,
      provider: {},
      export: (key: string, value: unknown) => {
        const site = callSiteIn(this.file);
        if (this.refusedLate(`stack.export("${key}")`, site)) return;
        this.place(["outputs", key], site);
        if (Object.hasOwn(outputs, key)) this.diagnostics.push(this.errorAt(site, `output "${key}" is exported twice`));
        outputs[key] = value;
      },
    };
  }

  /** Marks the program finished: its default export has settled (or failed). */
  settle(): void {
    this.settled = true;
  }

  /**
   * Whether `what` (an SDK call at `site`) comes after the program finished: then it is refused,
   * with a warning on stderr (once per call site). Such a call comes from work the program left
   * behind (an un-awaited promise, a callback); it must not change a stack already planned.
   */
  refusedLate(what: string, site: CallSite | undefined): boolean {
    if (!this.settled) return false;
    const d = warning(`${what} was called after the program finished: refused`, {
      file: site?.file ?? this.file,
      ...(site ? { line: site.line, column: site.column } : {}),
      detail:
        "The stack is what the default export declares by the time it settles (returns, or its promise " +
        "resolves); work it leaves behind (an un-awaited promise, a callback) cannot change it. Await that " +
        "work in the default export.",
    });
    const key = `${what}\u0000${d.line ?? ""}:${d.column ?? ""}`;
    if (!this.refusedAt.has(key)) {
      this.refusedAt.add(key);
      process.stderr.write(toPlain(diagnosticLines([d])));
    }
    return true;
  }

  /** A call site of the program, for a diagnostic. */
  siteOfCaller(): CallSite | undefined {
    return callSiteIn(this.file);
  }

  errorAt(site: CallSite | undefined, summary: string, detail?: string): Diagnostic {
    return error(summary, {
      file: site?.file ?? this.file,
      ...(site ? { line: site.line, column: site.column } : {}),
      ...(detail ? { detail } : {}),
    });
  }

  private place(path: (string | number)[], site: CallSite | undefined): void {
    if (site && site.file === this.file) this.positions.set(pathKey(path), { line: site.line, column: site.column });
  }

  /** Claims `name` (resources and variables share one namespace); a second use is an error at its call site. */
  private claim(name: string, what: string, site: CallSite | undefined): boolean {
    if (!this.names.has(name)) {
      this.names.set(name, site);
      return true;
    }
    const first = this.names.get(name);
    const where = first ? ` (first declared at ${first.file}:${first.line}:${first.column})` : "";
    this.diagnostics.push(
      this.errorAt(
        site,
        `duplicate name "${name}": a ${what} needs a name no other resource or invoke of the stack has${where}`,
        "References use names, so each name must be unique.",
      ),
    );
    return false;
  }

  addResource(
    name: string,
    type: string,
    args: unknown,
    options: Record<string, unknown>,
    site: CallSite | undefined,
  ): void {
    if (this.refusedLate(`new ${type.slice(type.lastIndexOf(":") + 1)}("${name}")`, site)) return;
    if (!this.claim(name, "resource", site)) return;
    this.place(["resources", name], site);
    this.resources[name] = { type, properties: args, ...(Object.keys(options).length ? { options } : {}) };
  }

  addInvoke(name: string, token: string, args: unknown, site: CallSite | undefined): void {
    if (this.refusedLate(`${token.slice(token.lastIndexOf(":") + 1)}Output`, site)) return;
    if (!this.claim(name, "invoke", site)) return;
    this.place(["variables", name], site);
    this.variables[name] = { "fn::invoke": { function: token, arguments: args } };
  }

  /** A rename (Pulumi's aliases): `moved:` of a YAML stack. */
  addMove(from: string, to: string, site: CallSite | undefined): void {
    this.place(["moved", this.moved.length], site);
    this.moved.push({ from, to });
  }

  /** A guardrail rule (`policies.rules` of a YAML stack), positioned at its call. */
  addRule(rule: Record<string, unknown>, site: CallSite | undefined): void {
    if (this.refusedLate(`new GuardrailRule("${String(rule.id)}")`, site)) return;
    this.place(["policies", "rules", this.rules.length], site);
    this.rules.push(rule);
  }

  /** A built-in rule's setting (`policies.builtins` of a YAML stack), positioned at its call. */
  addBuiltin(id: string, setting: unknown, site: CallSite | undefined): void {
    if (this.refusedLate(`new BuiltinGuardrail("${id}")`, site)) return;
    if (Object.hasOwn(this.builtins, id)) {
      this.diagnostics.push(this.errorAt(site, `built-in rule "${id}" is set twice`));
      return;
    }
    this.place(["policies", "builtins", id], site);
    this.builtins[id] = setting;
  }

  /** Declares a config input the program read (`config:` of a YAML stack), with the value it read. */
  addInput(name: string, decl: Record<string, unknown>): void {
    this.inputs[name] ??= decl;
  }

  /** Waits for every Promise and pending output the program gave (its arguments, options and
   *  outputs), then encodes them as the stack document holds them: once the program has run. */
  async finish(): Promise<void> {
    for (let i = 0; i < this.waits.length; i++) await this.waits[i]!.catch(() => undefined);
    for (const group of [this.resources, this.variables, this.outputs]) {
      for (const [k, v] of Object.entries(group)) group[k] = encode(await settled(v));
    }
    for (const [group, name] of [
      ["resources", this.resources],
      ["variables", this.variables],
    ] as const) {
      for (const [k, v] of Object.entries(name)) if (holdsDeferred(v)) this.refuseDeferred(group, k);
    }
  }

  /** A resource's input (or an invoke's argument) computed by a function that runs only during
   *  apply: converge plans every resource before apply starts and cannot plan it again then. */
  private refuseDeferred(group: "resources" | "variables", name: string): void {
    const at = this.positions.get(pathKey([group, name]));
    const site = at && { file: this.file, line: at.line, column: at.column };
    const what = group === "resources" ? `resource "${name}"` : `invoke "${name}"`;
    const summary = `${what} takes a value from .apply(…) on a value known only during apply`;
    const detail =
      "converge plans every resource before apply starts and cannot plan one again during apply, so a " +
      "function run then can only give a stack output. Build the input with interpolate, all or property " +
      "access (resolved by the engine during apply), or from values known at plan time.";
    this.diagnostics.push(this.errorAt(site, summary, detail));
  }

  /** A read the stack waits for before it is made (its failure is a diagnostic it pushed itself). */
  waitFor(p: Promise<unknown>): void {
    this.waits.push(p);
  }

  /** An unused name for an invoke: `base`, else base2, base3… */
  freshName(base: string): string {
    if (!this.names.has(base)) return base;
    let n = 2;
    while (this.names.has(`${base}${n}`)) n++;
    return `${base}${n}`;
  }

  /** The stack document, as a YAML stack would parse to. */
  document(): Record<string, unknown> {
    const s = this.stack;
    return {
      name: s.name,
      ...(s.description !== undefined ? { description: s.description } : {}),
      provider: encode(s.provider),
      ...(s.backend !== undefined ? { backend: s.backend } : {}),
      ...(Object.keys(this.inputs).length ? { config: this.inputs } : {}),
      ...(Object.keys(this.variables).length ? { variables: this.variables } : {}),
      resources: this.resources,
      ...(Object.keys(this.outputs).length ? { outputs: this.outputs } : {}),
      ...(this.moved.length ? { moved: this.moved } : {}),
      ...(s.lint !== undefined ? { lint: s.lint } : {}),
      ...this.policies(),
    };
  }

  private policies(): { policies?: Record<string, unknown> } {
    const builtins = Object.keys(this.builtins).length ? { builtins: this.builtins } : {};
    return this.rules.length || builtins.builtins ? { policies: { rules: this.rules, ...builtins } } : {};
  }
}

/** Whether an encoded value holds a deferred `.apply` (./deferred.ts). */
function holdsDeferred(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(holdsDeferred);
  if (v === null || typeof v !== "object") return false;
  return Object.hasOwn(v, DEFERRED_APPLY) || Object.values(v).some(holdsDeferred);
}

/** The program being run: one per async context, kept on globalThis so two copies of the package
 *  (the CLI's and the one a program imports) share it. */
const KEY = Symbol.for("converge.sdk.current-program");
const store = ((globalThis as Record<symbol, unknown>)[KEY] ??=
  new AsyncLocalStorage<ProgramBuilder>()) as AsyncLocalStorage<ProgramBuilder>;

// Under validate and graph no invoke is read while the program runs: `.apply` on its result then
// stands for the (unknown) result itself, so the stack's shape and dependencies can be checked.
// Under plan and apply, `.apply` on a value known only during apply runs then (./deferred.ts).
onUnknownApply((o) => {
  const b = store.getStore();
  return b === undefined ? undefined : b.readsNow ? "defer" : o;
});

export function runInProgram<T>(builder: ProgramBuilder, fn: () => T): T {
  return store.run(builder, fn);
}

/** The program being run; outside one, declaring a resource is a mistake of the caller. */
export function currentProgram(what: string): ProgramBuilder {
  const b = store.getStore();
  if (!b)
    throw new UserError(
      error(`${what} was called outside a converge program`, {
        detail:
          "Declare resources inside the function a stack file exports by default, or the one passed to Stack.inline.",
      }),
    );
  return b;
}
