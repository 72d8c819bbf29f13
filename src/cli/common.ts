// What every stack command shares: options, loading with diagnostics, state location, output
// mode (ink in a terminal, plain text otherwise, JSON with --json) and exit codes.
import { existsSync } from "node:fs";
import { Option, type Command } from "commander";
import isInCi from "is-in-ci";
import type { GivenInputs, InputValue } from "../config/inputs.js";
import { readInputs } from "../config/var-files.js";
import { type Diagnostic, UserError } from "../diagnostics/diagnostic.js";
import { jsonChunks, terminalText } from "../diagnostics/terminal-text.js";
import { isCloudError } from "../cloud/errors.js";
import type { StateStore } from "../state/index.js";
import { loadAnyStackFile } from "../sdk/load-any.js";
import type { StackSession } from "../engine/session.js";
import type { OpenedState, StateLocation } from "../state/factory.js";
import { BACKEND_TYPES, type BackendType } from "../state/backend-types.js";
import { diagnosticLines } from "../diagnostics/diagnostic-lines.js";
import { terminalWidth, wrapLines } from "./render/wrap.js";
import { rateOption } from "./rate-option.js";
import { catchCommandSignals, exitCodeAfter, outputFailed } from "./interrupt.js";
import { durationMs } from "./deadline.js";
import { EXIT } from "./exit-codes.js";
import { ansiLine, type Line, plainLine, toPlain } from "../diagnostics/lines.js";
import { textPieces } from "../base/text-pieces.js";
import { redactText } from "../config/redact.js";

export interface StackOptions {
  file: string;
  state?: string;
  backend?: BackendType;
  workspace?: string;
  parallelism: string;
  json?: boolean;
  color: boolean;
  lockTimeout?: string;
  callTimeout?: string;
  rate?: string[];
  timeout?: string;
  strict?: boolean;
  /** --var name=value, repeatable */
  var?: string[];
  /** --var-file FILE, repeatable */
  varFile?: string[];
  /** --policy FILE: guardrail rules files, repeatable (with CONVERGE_POLICY's) */
  policy?: string[];
}

/** The help of -f for the commands that only read or edit the state (see stateStoreOf). */
export const STACK_FILE_HELP = "stack file: names the state, which must belong to it (default: stack.yaml)";

/** The help of every --state option. */
export const STATE_OPTION_HELP = "state file (default: state/{stack name}.json in the stack file's directory)";

/** The help of every --workspace option. */
export const WORKSPACE_OPTION_HELP =
  "the workspace whose state to use (default: CONVERGE_WORKSPACE, else the " +
  "one `converge workspace select` chose, else default)";

/** --backend's choices: the state backends, from the module that names them without loading them
 *  (state/factory.ts loads every backend; validate, which opens no state, must not). */
export const BACKEND_CHOICES: readonly BackendType[] = BACKEND_TYPES;

/** --backend: the state backend, overriding the stack's `backend.type`. */
export function backendOption(): Option {
  return new Option(
    "--backend <type>",
    "where the state lives, overriding the stack's backend: local or postgres " +
      "(connection from DATABASE_URL or PG* variables)",
  ).choices(BACKEND_CHOICES);
}

/** The options of commands that load a stack. `cloud: false` for commands that only read the
 *  stack (no state, no calls); `lock: false` for commands that take no state lock. */
export function addStackOptions(cmd: Command, opts: { json?: boolean; cloud?: boolean; lock?: boolean } = {}): Command {
  cmd.option("-f, --file <path>", "stack file", "stack.yaml");
  if (opts.cloud !== false)
    cmd
      .option("--state <path>", STATE_OPTION_HELP)
      .addOption(backendOption())
      .option("--workspace <name>", WORKSPACE_OPTION_HELP)
      .option("--parallelism <n>", "concurrent cloud calls", "10");
  cmd.option("--no-color", "plain text output, no colours");
  if (opts.cloud !== false && opts.lock !== false)
    cmd.addOption(new Option("--lock-timeout <duration>", "wait this long for the state lock (e.g. 30s)"));
  if (opts.cloud !== false)
    cmd
      .addOption(
        new Option("--call-timeout <duration>", "give up on a cloud call after this long, retries included").default(
          "2m",
        ),
      )
      .addOption(rateOption());
  cmd.addOption(
    new Option(
      "--timeout <duration>",
      "stop the whole command after this long, as Ctrl-C does, and exit 1 (default: no limit)",
    ),
  );
  cmd.option("--strict", "treat lint warnings as errors");
  const policy = "guardrail rules to check the plan against (repeatable; also CONVERGE_POLICY)";
  if (opts.cloud !== false) cmd.addOption(new Option("--policy <file>", policy).argParser(collect));
  addInputOptions(cmd);
  if (opts.json !== false) cmd.option("--json", "machine-readable output on stdout (diagnostics on stderr)");
  return cmd;
}

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

/** --var and --var-file: values of the stack's inputs (`config:`). */
export function addInputOptions(cmd: Command): Command {
  cmd.addOption(
    new Option(
      "--var <name=value>",
      "set an input (repeatable; lists and maps as JSON; wins over --var-file)",
    ).argParser(collect),
  );
  cmd.addOption(
    new Option("--var-file <file>", "read inputs from a YAML or JSON file (repeatable; a later file wins)").argParser(
      collect,
    ),
  );
  return cmd;
}

/** The values given for the stack's inputs: --var, --var-file and CONVERGE_VAR_ variables. A
 *  problem reading them (a missing file, a --var without "=") is in `problems`: the loader reports
 *  it with the stack's own diagnostics, and the stack does not load. */
export function inputsOf(o: { var?: string[]; varFile?: string[] }): GivenInputs {
  return readInputs({ vars: o.var ?? [], varFiles: o.varFile ?? [], env: process.env }).given;
}

/** Examples under a command's help. */
export function withExamples(cmd: Command, examples: readonly string[]): Command {
  return cmd.addHelpText("after", `\nExamples:\n${examples.map((e) => `  ${e}`).join("\n")}`);
}

export function parallelismOf(o: StackOptions): number {
  const n = Number(o.parallelism);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new UserError({
      severity: "error",
      summary: `--parallelism must be a whole number from 1 to 1000, got "${o.parallelism}"`,
    });
  return n;
}

/** --call-timeout in ms: a positive duration (default 2 minutes). */
export function callTimeoutOf(o: { callTimeout?: string }): number {
  const ms = durationMs(o.callTimeout ?? "2m", "--call-timeout")!;
  if (ms < 1)
    throw new UserError({ severity: "error", summary: `--call-timeout must be more than 0, got "${o.callTimeout}"` });
  return ms;
}

/** Whether stdout gets colour/ink: a terminal, no --no-color, no NO_COLOR. */
function useColor(o: { color?: boolean; json?: boolean }): boolean {
  return !o.json && o.color !== false && !process.env.NO_COLOR && process.stdout.isTTY === true;
}

/** Whether a live (redrawn) ink view can be shown: with CI set, ink draws only its last frame at
 *  exit, so live progress or a prompt would stay invisible while it matters. */
export function useLiveView(o: { color?: boolean; json?: boolean }): boolean {
  return useColor(o) && !isInCi;
}

/** Largest piece of text handed to stdout at once by printLines and writeJsonOut. */
const OUT_PIECE = 1 << 20;

/** Prints lines to stdout: with ANSI colours in a colour terminal, else as plain text. In a
 *  terminal, a line longer than its width is folded at word boundaries (./render/wrap.ts), never
 *  inside a quoted value (an ID a reader copies); to a pipe or a file each line is written whole.
 *  The text (toAnsi's or toPlain's) goes out in pieces of about a megabyte: that of a plan of
 *  100,000 resources (66 MB) is never one string. */
export function printLines(lines: Iterable<Line>, o: { color?: boolean; json?: boolean }): Promise<void> {
  const line = useColor(o) ? ansiLine : plainLine;
  return writeInPieces(
    (function* () {
      let any = false;
      for (const l of wrapLines(lines, terminalWidth(process.stdout))) {
        any = true;
        yield line(l) + "\n";
      }
      if (!any) yield "\n"; // as toPlain([]) gives
    })(),
  );
}

/** `chunks` joined, on stdout in pieces of about OUT_PIECE characters as they are made. */
async function writeInPieces(chunks: Iterable<string>): Promise<void> {
  // Scrubbed chunk by chunk (a secret is never split between two: lines, whole JSON values).
  for (const piece of textPieces(mapped(chunks, redactText), OUT_PIECE)) await writeRaw(piece);
}

function* mapped(chunks: Iterable<string>, f: (s: string) => string): Generator<string> {
  for (const c of chunks) yield f(c);
}

/** Stdout for streams of many short lines (apply progress, JSON events): the lines of one turn of
 *  the event loop go out in one write. A 10,000-resource apply prints 20,000 lines, and each
 *  write to a pipe or file is a synchronous system call. `flush` before anything else is written. */
export function batchedStdout(): { line: (text: string) => void; flush: () => void } {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending.length) return;
    const text = pending.join("");
    pending = [];
    process.stdout.write(redactText(text));
  };
  return {
    line(text) {
      pending.push(text + "\n");
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/**
 * Ends the process (with process.exitCode) once stdout and stderr have taken everything written,
 * without the wait node makes at a natural exit for V8's background work (optimising compiles,
 * GC) that no one needs any more: about 20 ms of a `validate`. Only for a command that leaves
 * nothing running and nothing buffered elsewhere.
 */
function exitWhenFlushed(): Promise<never> {
  return new Promise<never>(
    () =>
      void stdoutWritten().then(() =>
        process.stderr.write("", () => process.exit(exitCodeAfter(Number(process.exitCode ?? EXIT.ok)))),
      ),
  );
}

/** Writes `text` to stdout; resolves once it is written, or once its write failed (a closed
 *  output: reported at once to ./interrupt.ts, which stops the command; the text is dropped). */
export function writeOut(text: string): Promise<void> {
  return writeRaw(redactText(text));
}

/** writeOut without the redaction (text already scrubbed). */
function writeRaw(text: string): Promise<void> {
  return new Promise((res) =>
    process.stdout.write(text, (e) => {
      if (e) outputFailed("stdout", e);
      res();
    }),
  );
}

/** Resolves once stdout has taken everything written before; a failure is reported as writeOut's. */
export function stdoutWritten(): Promise<void> {
  return writeOut("");
}

/** jsonText(value, 2) and a newline on stdout, written in pieces as they are made (jsonChunks):
 *  the whole text of a large plan is never in memory at once. */
export function writeJsonOut(value: unknown): Promise<void> {
  return writeInPieces(
    (function* () {
      yield* jsonChunks(value, 2);
      yield "\n";
    })(),
  );
}

export function printDiagnostics(diags: readonly Diagnostic[]): void {
  if (diags.length)
    process.stderr.write(redactText(toPlain([...wrapLines(diagnosticLines(diags), terminalWidth(process.stderr))])));
}

/** Loads the stack, YAML or a program by the file's extension (printing its warnings), and opens its state store. */
export async function openStackOf(
  o: StackOptions,
  how: { offline?: string; planInputs?: InputValue[] } = {},
): Promise<StackSession> {
  // The engine loads with the first command that opens a session (not for validate).
  const { openStackFile } = await import("../engine/session.js");
  const { policyFilesOf } = await import("../guardrails/rules.js");
  const { planInputs, ...rest } = how;
  const inputs = planInputs ? { ...inputsOf(o), plan: planInputs } : inputsOf(o);
  const state = o.state !== undefined ? { state: o.state } : {};
  const where = { ...state, ...(o.backend !== undefined ? { backend: o.backend } : {}) };
  const policyFiles = policyFilesOf(process.env, o.policy);
  const session = await openStackFile({
    file: o.file,
    ...rest,
    callTimeoutMs: callTimeoutOf(o),
    ...where,
    ...(o.workspace !== undefined ? { workspace: o.workspace } : {}),
    strict: o.strict === true,
    inputs,
    policyFiles,
  });
  printDiagnostics(session.warnings);
  return session;
}

/**
 * The state of the commands that only read or edit the state (state list|show|rm|mv, output,
 * force-unlock): the stack file (-f, default stack.yaml) names it and is the stack it must
 * belong to. Only with --state and no stack file (none given, no stack.yaml here) is the state
 * opened for no stack in particular.
 */
export async function stateStoreOf(o: StateCommandOptions): Promise<StateStore> {
  return (await openedStateOf(o)).store;
}

/** What the state commands say about where the state is. */
export interface StateCommandOptions {
  file?: string;
  state?: string;
  backend?: BackendType;
  workspace?: string;
}

/** stateStoreOf's state with its workspace and the stack's workspaces (undefined: a bare --state file). */
export async function openedStateOf(o: StateCommandOptions): Promise<OpenedState> {
  const file = o.file ?? "stack.yaml";
  const { bareStateFile, openStateStore } = await import("../state/factory.js");
  if (o.state && o.file === undefined && o.backend !== "postgres" && !existsSync(file))
    return bareStateFile(o.state, o.workspace);
  const { stack, diagnostics } = await loadAnyStackFile(file, { inputs: inputsOf({}), inputsOptional: true });
  if (!stack)
    throw new UserError(diagnostics.length ? diagnostics : { severity: "error", summary: `cannot load ${file}` });
  return openStateStore({
    stackFile: stack.file,
    stackName: stack.name,
    ...stateChoice(stack.backend, o),
    ...(o.workspace !== undefined ? { workspace: o.workspace } : {}),
  });
}

/** What the flags and the stack's `backend:` say about where the state is. */
export function stateChoice(
  backend: StateLocation["backend"],
  o: { state?: string; backend?: BackendType },
): Pick<StateLocation, "state" | "backend" | "backendType"> {
  return {
    ...(o.state !== undefined ? { state: o.state } : {}),
    ...(backend ? { backend } : {}),
    ...(o.backend !== undefined ? { backendType: o.backend } : {}),
  };
}

/**
 * Runs a command action: user errors print as diagnostics (exit 1, no stack trace); anything
 * else is a bug and prints with its stack. `exitWhenDone`: the process ends once the output is
 * written (exitWhenFlushed), for a command that leaves nothing running. From its start to the
 * process's end, SIGINT, SIGTERM, SIGHUP and a closed output stop the command, releasing its
 * state locks (./interrupt.ts).
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<number | void>,
  opts: { exitWhenDone?: boolean } = {},
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    catchCommandSignals();
    let code: number;
    try {
      code = (await fn(...args)) ?? EXIT.ok;
    } catch (e) {
      if (e instanceof UserError) {
        printDiagnostics(e.diagnostics);
        code = EXIT.error;
      } else if (isCloudError(e)) {
        printDiagnostics([{ severity: "error", summary: e.message }]);
        code = EXIT.error;
      } else {
        // A stack trace is lines; what it quotes may come from anywhere.
        const trace = redactText(((e as Error)?.stack ?? String(e)).split("\n").map(terminalText).join("\n"));
        process.stderr.write(`converge: internal error (this is a bug): ${trace}\n`);
        code = EXIT.error;
      }
    }
    process.exitCode = exitCodeAfter(code);
    if (opts.exitWhenDone) await exitWhenFlushed();
  };
}
