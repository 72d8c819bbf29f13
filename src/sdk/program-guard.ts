// A program stack runs in converge's own process, so while it loads and while its default export
// runs it is kept from breaking the CLI's contract:
// - process.exit from the program (not from converge: --timeout, Ctrl-C, a closed pipe) is not
//   taken: the run fails with "the program called process.exit(N)" at the call, and the call
//   throws to stop the program's code where it is;
// - what it writes to stdout goes to stderr, as it is: stdout holds only converge's output
//   (`plan --json` stays JSON);
// - an exception thrown in one of its callbacks (a timer) is the program's failure, not a crash;
// - a program that never finishes: when the event loop empties ('beforeExit') while the program is
//   still pending, nothing can settle it any more (no timer, socket or other work is left), so the
//   run fails with "did not finish". This is exact, unlike a timeout: a slow program is waited
//   for, a stuck one is told at once. (Work still pending elsewhere in the process, e.g. an
//   Automation API user's own server, keeps the loop alive: then it waits, as any await would.)
// - the timers it schedules (setTimeout, setInterval, setImmediate, at load or while it runs, and
//   from their callbacks) are the program's work: once its default export has settled, those
//   still pending are cancelled (ProgramWork.cancel). The stack is what the export declared by
//   then; a timer left behind neither keeps the CLI alive nor runs during plan or apply.
// - the sockets, servers, pipes, child processes and file watchers it opens (not converge's own:
//   one made under converge's code, such as a direct read's connection, is not the program's)
//   may outlive the run and be heard from during the command (a late SDK call is refused and
//   said), but once the command is done they no longer keep the CLI alive (./program-handles.ts).
// Nothing else outlives the run (an SDK call made later is refused: src/sdk/context.ts).
import { AsyncLocalStorage, createHook } from "node:async_hooks";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { type Diagnostic, error, UserError } from "../diagnostics/diagnostic.js";
import { terminalText } from "../diagnostics/terminal-text.js";
import { type CallSite, framesOf } from "./call-site.js";
import { missingPackageDiagnostic } from "./missing-package.js";
import { forgetClosedHandles, HANDLE_TYPES, programClosed, programOpened, programRan } from "./program-handles.js";

export type Phase = "load" | "run";

/** The package's own code (the CLI, the engine, the SDK): process.exit from there is converge's. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OWN = [`${ROOT}dist/`, `${ROOT}src/`];

/** Thrown by the intercepted process.exit, to stop the program's code at the call. */
class ProgramExit extends Error {
  constructor(readonly code: unknown) {
    super(`process.exit(${shown(code, "")}) called by the program`);
    this.name = "ProgramExit";
  }
}

const MAX_SHOWN = 300;

/** A thrown value (or an exit code) as one bounded line of text, for a diagnostic. */
export function shown(v: unknown, none = "undefined"): string {
  let text: string;
  if (v === undefined) return none;
  if (typeof v === "string") text = v;
  else {
    try {
      text = inspect(v, {
        depth: 2,
        breakLength: Infinity,
        maxArrayLength: 10,
        maxStringLength: 100,
        customInspect: false,
        showProxy: true,
        getters: false,
      });
    } catch {
      text = "a value that cannot be shown";
    }
  }
  text = terminalText(text);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

function isErrorLike(e: unknown): e is Error {
  return (
    e instanceof Error ||
    (typeof e === "object" &&
      e !== null &&
      typeof (e as Error).message === "string" &&
      typeof (e as Error).stack === "string")
  );
}

/** The longest error message a diagnostic shows of a program's error. */
const MAX_MESSAGE = 2_000;

/** A program's error message, cut when long: "xxx… (52428800 characters in all)". */
function boundedMessage(message: string): string {
  if (message.length <= MAX_MESSAGE) return message;
  return `${message.slice(0, MAX_MESSAGE)}… (${message.length} characters in all)`;
}

/** An exception of the program (not of converge) as a diagnostic at its innermost program frame. */
export function thrownBy(file: string, e: unknown): Diagnostic {
  try {
    return diagnosticOf(file, e);
  } catch {
    // A getter of the thrown value (message, stack) threw in turn.
    return error("the program failed: it threw a value that cannot be read", { file });
  }
}

/** The diagnostic of a UserError of another copy of converge, positioned in `file`; else undefined. */
function sdkDiagnostic(e: unknown, file: string): Diagnostic | undefined {
  if (!(e instanceof Error) || e.name !== "UserError") return undefined;
  const d = (e as { diagnostics?: unknown }).diagnostics;
  const first = Array.isArray(d) ? (d[0] as Partial<Diagnostic> | undefined) : undefined;
  if (first?.severity !== "error" || typeof first.summary !== "string" || first.file !== file) return undefined;
  const num = (n: unknown) => (typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined);
  const line = num(first.line);
  const column = num(first.column);
  const detail = typeof first.detail === "string" ? { detail: boundedMessage(first.detail) } : {};
  return error(boundedMessage(first.summary), { file, ...(line && column ? { line, column } : {}), ...detail });
}

function diagnosticOf(file: string, e: unknown): Diagnostic {
  if (e instanceof UserError && e.diagnostics[0]) return e.diagnostics[0];
  // The SDK's own UserError from the copy of converge the program imports (the CLI is bundled
  // apart), thrown where no frame of the program is on the stack (a callback of a read).
  const sdk = sdkDiagnostic(e, file);
  if (sdk) return sdk;
  if (!isErrorLike(e)) {
    return error(`the program failed: it threw ${shown(e)}`, {
      file,
      detail:
        "A thrown value that is not an Error has no stack trace, so where it was " +
        "thrown is not known: throw an Error to get its line.",
    });
  }
  const missing = missingPackageDiagnostic(file, e);
  if (missing) return missing;
  // A message of several lines: the first is the summary, the others its detail.
  const [message = "", ...rest] = String(e.message || e.name).split("\n");
  let stack = String(e.stack ?? "");
  // The frames follow the message, which may be long: they are read past it.
  const at = stack.indexOf(message);
  if (at >= 0 && at < 200) stack = stack.slice(at + message.length);
  const site = framesOf(`\n${stack}`).find((f) => f.file === file);
  const where = site ? { line: site.line, column: site.column } : {};
  const detail = rest.join("\n").trim();
  const more = detail ? { detail: boundedMessage(detail) } : {};
  return error(`the program failed: ${boundedMessage(message)}`, { file, ...where, ...more });
}

interface Run {
  file: string;
  phase: Phase;
  fail(d: Diagnostic): void;
}

/** The runs under way (Automation API users may load several programs at once). */
const runs = new Set<Run>();
let saved: { exit: typeof process.exit; write: typeof process.stdout.write; ownWrite: boolean } | undefined;

function at(file: string, site: CallSite | undefined): Pick<Diagnostic, "file" | "line" | "column"> {
  return { file: site?.file ?? file, ...(site ? { line: site.line, column: site.column } : {}) };
}

function interceptedExit(this: unknown, code?: unknown): never {
  // The frames below this one (callerFrames would add its own, in the SDK's directory).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  const frames = framesOf(new Error().stack ?? "")
    .slice(1)
    .filter((f) => !f.file.startsWith("node:"));
  Error.stackTraceLimit = limit;
  if (!saved || (frames[0] && OWN.some((dir) => frames[0]!.file.startsWith(dir))))
    return (saved?.exit ?? process.exit).call(process, code as number);
  const run = [...runs].find((r) => frames.some((f) => f.file === r.file)) ?? [...runs][0]!;
  const site = frames.find((f) => f.file === run.file) ?? frames[0];
  run.fail(
    error(`the program called process.exit(${shown(code, "")})`, {
      ...at(run.file, site),
      detail: "converge ends the run itself: throw an Error to stop the program.",
    }),
  );
  throw new ProgramExit(code);
}

function onUncaught(e: unknown): void {
  if (e instanceof ProgramExit) return;
  const run = [...runs][0];
  if (!run) throw e;
  run.fail(thrownBy(run.file, e));
}

function onEmpty(): void {
  for (const run of [...runs]) {
    run.fail(
      error(
        run.phase === "load"
          ? "the program did not finish loading: its top-level await never settled"
          : "the program did not finish: its default export returned a promise that never settled",
        {
          file: run.file,
          detail:
            "Nothing was left to run that could settle it (no timer, no I/O): a " +
            "promise nothing resolves, or an await on one.",
        },
      ),
    );
  }
}

function install(): void {
  const out = process.stdout;
  saved = { exit: process.exit, write: out.write, ownWrite: Object.hasOwn(out, "write") };
  process.exit = interceptedExit as typeof process.exit;
  out.write = ((...args: Parameters<typeof out.write>) =>
    process.stderr.write(...(args as [string]))) as typeof out.write;
  process.on("beforeExit", onEmpty);
  process.off("uncaughtException", onUncaught);
  process.on("uncaughtException", onUncaught);
}

function uninstall(): void {
  if (!saved) return;
  process.exit = saved.exit;
  if (saved.ownWrite) process.stdout.write = saved.write;
  else delete (process.stdout as Partial<typeof process.stdout>).write;
  saved = undefined;
  process.off("beforeExit", onEmpty);
  // An exit intercepted in a callback is still to be thrown out of it: the listener stays a turn
  // (converge's own timer, not the program's, even when the program's code ends the run).
  workStore.exit(() =>
    setImmediate(() => {
      if (!saved) process.off("uncaughtException", onUncaught);
    }),
  );
}

/** The program whose code is running, through every callback and promise it schedules. */
const workStore = new AsyncLocalStorage<ProgramWork>();
/** The timers programs scheduled that have not run (or been cleared) yet, by async id. */
const pendingTimers = new Map<number, { work: ProgramWork; immediate: boolean; timer: unknown }>();
let activeWorks = 0;
function onInit(id: number, type: string, _trigger: number, resource: object): void {
  if (HANDLE_TYPES.has(type)) {
    if (workStore.getStore() && !openedByConverge()) programOpened(id, type, resource);
    return;
  }
  const work = type === "Timeout" || type === "Immediate" ? workStore.getStore() : undefined;
  if (work && !work.cancelled) pendingTimers.set(id, { work, immediate: type === "Immediate", timer: resource });
}

const workHook = createHook({
  init: onInit,
  destroy(id) {
    pendingTimers.delete(id);
    programClosed(id);
  },
});

/** Whether the code opening a handle (the innermost frame outside Node) is converge's own (the
 *  SDK's direct reads, the cloud client), not the program's or a package the program uses. */
function openedByConverge(): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 32;
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, onInit);
  Error.stackTraceLimit = limit;
  const first = framesOf(holder.stack ?? "").find((f) => !f.file.startsWith("node:"));
  return first !== undefined && OWN.some((dir) => first.file.startsWith(dir));
}

/** What a program schedules while it loads and runs (see the header): its timers, cancelled once
 *  it has settled, and the handles it opens (./program-handles.ts). */
export class ProgramWork {
  cancelled = false;

  constructor() {
    programRan();
    forgetClosedHandles();
    if (activeWorks++ === 0) workHook.enable();
  }

  /** Cancels the program's pending timers (once). */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const [id, t] of pendingTimers) {
      if (t.work !== this) continue;
      pendingTimers.delete(id);
      if (t.immediate) clearImmediate(t.timer as NodeJS.Immediate);
      else clearTimeout(t.timer as NodeJS.Timeout);
    }
    if (--activeWorks === 0) workHook.disable();
  }
}

/** Runs `fn` (loading a program, or running its default export) guarded as said above: its
 *  value, or the diagnostic of how the program failed. What it schedules belongs to `work`. */
export function guarded<T>(
  file: string,
  phase: Phase,
  fn: () => Promise<T>,
  work?: ProgramWork,
): Promise<{ value: T } | { failure: Diagnostic }> {
  return new Promise((resolve) => {
    const run: Run = {
      file,
      phase,
      fail: (d) => finish({ failure: d }),
    };
    const finish = (r: { value: T } | { failure: Diagnostic }) => {
      if (!runs.delete(run)) return;
      if (!runs.size) uninstall();
      resolve(r);
    };
    if (!runs.size) install();
    runs.add(run);
    const running = () => (async () => fn())();
    (work ? workStore.run(work, running) : running()).then(
      (value) => finish({ value }),
      (e: unknown) => (e instanceof ProgramExit ? undefined : run.fail(thrownBy(file, e))),
    );
  });
}
