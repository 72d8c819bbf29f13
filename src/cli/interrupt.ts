// What interrupts a command: Ctrl-C (SIGINT), SIGTERM, SIGHUP (a closed terminal or SSH session),
// and its output closing: a write to stdout or stderr that failed because its reader left
// (`converge apply | head`, EPIPE), or because its terminal is gone (EIO; as a hangup). One
// listener for each signal, for the whole command (`action` starts it with catchCommandSignals),
// and main.ts's handler of a failed write (outputFailed) hand the interrupt to the phase that
// handles it, if one runs:
//  - while a command talks to the cloud (catchInterrupts): the first interrupt aborts `signal`:
//    the engine starts no new cloud call (calls in flight finish), saves what completed, the lock
//    is released and the command exits with the interrupt's code (below). A second SIGINT or
//    SIGTERM exits at once; a hangup or a closed output only ever starts the stop (after a hangup
//    every write fails, and no one is there to ask for haste). The command's --timeout
//    (./deadline.ts) aborts `signal` the same way; the command then exits 1.
//  - while the plain approval prompt waits (views/approval.tsx): a refusal.
// Anywhere else (loading, between the phases while the state lock is held, while a plan or a
// summary is printed, after the apply) an interrupt stops the command at once: the state locks it
// holds are released, one line goes to stderr, and it exits with the interrupt's code.
// Exit codes: 130 for SIGINT and SIGTERM (as ever), 129 (128 + SIGHUP) after a hangup or a
// terminal gone, 141 (128 + SIGPIPE) after a closed pipe or file; then the command exits with
// that code whatever it would have returned (exitCodeAfter): what it printed was not all read.
// What is written after the output closed is dropped: a write to a closed stream fails (its
// error comes back here), it never throws.
import { setMaxListeners } from "node:events";
import { closeSync } from "node:fs";
import { isatty } from "node:tty";
import { releaseHeldLocks } from "../state/local/held-locks.js";
import { isolatePrograms } from "../sdk/program-mode.js";
import { EXIT } from "./exit-codes.js";
import { abortedByTimeout, commandTimeout, handleTimeout } from "./deadline.js";
import type { Stopped } from "../engine/operations.js";

/** A signal; "terminal": a write to the terminal failed (it hung up); "output": a write to a
 *  pipe or file failed (its reader left). */
export type InterruptCause = NodeJS.Signals | "terminal" | "output";

type InterruptHandler = (cause: InterruptCause) => void;

const SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
/** Longest wait for the locks' release before exiting anyway (a database that does not answer:
 *  its session ends with the process, and with it the lock). */
const RELEASE_WAIT_MS = 3_000;

/** The handlers of the phases running now, innermost last: the last one gets an interrupt. */
const phases: InterruptHandler[] = [];
let commandWide = false;
let listening = false;
let exiting = false;
/** The first interrupt this process got: it decides the exit code. */
let first: InterruptCause | undefined;
/** Which output failed, and how ("stdout: EPIPE"), once one did. */
let failedOutput: string | undefined;

/** Whether `cause` may be the second interrupt that ends the process at once: a person's. */
const urgent = (cause: InterruptCause) => cause === "SIGINT" || cause === "SIGTERM";

/** The exit code of a command stopped by `cause`: 130, 129 or 141. */
function exitCodeOf(cause: InterruptCause | undefined): number {
  if (cause === "SIGHUP" || cause === "terminal") return EXIT.hangup;
  return cause === "output" ? EXIT.outputClosed : EXIT.interrupted;
}

/** The exit code of the command the interrupts so far stopped. */
export function interruptedExit(): number {
  return exitCodeOf(first);
}

/** The exit code of a command that returned `code`: after a hangup or a closed output, theirs. */
export function exitCodeAfter(code: number): number {
  return first === undefined || urgent(first) ? code : exitCodeOf(first);
}

/** What a failed output is called where it stops the command: "Output closed (stdout: EPIPE)". */
function failure(cause: "terminal" | "output"): string {
  return `${cause === "terminal" ? "Terminal gone" : "Output closed"} (${failedOutput})`;
}

/** How the first interrupt in a phase is named: "Interrupt received", "Output closed (stdout: EPIPE)". */
function arrival(cause: InterruptCause): string {
  if (cause === "terminal" || cause === "output") return failure(cause);
  return `${cause === "SIGHUP" ? "Hangup (SIGHUP)" : "Interrupt"} received`;
}

/** Which of stdin, stdout and stderr were terminals when the command started. */
const TTY_AT_START = [0, 1, 2].map((fd) => isatty(fd));

/** At exit, Node restores the settings of each stdio terminal as they were at its start, and (up to
 *  Node 22, nodejs/node#51519) aborts when that fails: a terminal that hung up answers EIO, and the
 *  process died of SIGABRT instead of exiting 129. The descriptors of a terminal that is gone (no
 *  longer answering as one) are closed first: Node skips a closed one. */
function leaveGoneTerminals(): void {
  for (const fd of [0, 1, 2]) {
    if (!TTY_AT_START[fd] || isatty(fd)) continue;
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

function dispatch(cause: InterruptCause): void {
  if (first !== undefined && !urgent(cause)) return; // the command is already stopping
  if (first === undefined && !urgent(cause)) process.once("exit", leaveGoneTerminals);
  first ??= cause;
  if (exiting) process.exit(exitCodeOf(first)); // a signal again while the locks are released: at once
  const phase = phases.at(-1);
  if (phase) phase(cause);
  else {
    const what = cause === "terminal" || cause === "output" ? failure(cause) : `Interrupted (${cause})`;
    void exitInterrupted((released) => `${what}: stopped${released ? "; the state lock was released" : ""}.`);
  }
}

/** A write to stdout or stderr failed (`error`, from the stream's error event or a write's
 *  callback): its reader is gone (EPIPE), or its terminal (EIO). An interrupt, once. */
export function outputFailed(stream: "stdout" | "stderr", error: Error): void {
  if (failedOutput !== undefined) return;
  failedOutput = `${stream}: ${(error as NodeJS.ErrnoException).code ?? error.message}`;
  dispatch(process[stream].isTTY ? "terminal" : "output");
}

/** Whether the command is stopping at once (an interrupt outside a phase): the process exits as
 *  soon as its locks are released, and the command must write nothing more. */
export function stopping(): boolean {
  return exiting;
}

/** Never settles: where a command must not go on because it is stopping (see stopping). */
export function haltForExit(): Promise<never> {
  return new Promise<never>(() => {});
}

function listen(on: boolean): void {
  if (on === listening) return;
  listening = on;
  for (const s of SIGNALS) {
    if (on) process.on(s, dispatch);
    else process.off(s, dispatch);
  }
}

/** From now until the process ends, SIGINT, SIGTERM and SIGHUP no longer kill it: outside a phase
 *  that handles them, they stop the command (see above). */
export function catchCommandSignals(): void {
  commandWide = true;
  // A program stack that spins in this thread would keep these listeners from running.
  isolatePrograms();
  listen(true);
}

/** `handler` gets the interrupts (signals, a closed output) until the returned function is called. */
export function takeSignals(handler: InterruptHandler): () => void {
  phases.push(handler);
  listen(true);
  return () => {
    const i = phases.lastIndexOf(handler);
    if (i >= 0) phases.splice(i, 1);
    if (!phases.length && !commandWide) listen(false);
  };
}

/** Releases the state locks this process holds (waiting RELEASE_WAIT_MS at most), writes `line`
 *  to stderr and exits with the interrupt's code. A further signal meanwhile exits at once. */
async function exitInterrupted(line: string | ((released: number) => string)): Promise<never> {
  exiting = true;
  let timer: NodeJS.Timeout | undefined;
  const released = await Promise.race([
    releaseHeldLocks(),
    new Promise<number>((r) => (timer = setTimeout(() => r(0), RELEASE_WAIT_MS))),
  ]);
  clearTimeout(timer);
  process.stderr.write(`${typeof line === "string" ? line : line(released)}\n`);
  process.exit(exitCodeOf(first));
}

export interface Interrupts {
  /** Aborted by the first interrupt, or by --timeout (with a TimeoutError reason: see abortedByTimeout). */
  readonly signal: AbortSignal;
  /** Runs before a second signal exits at once (e.g. to flush buffered progress lines). */
  beforeExit(fn: () => void): void;
  /** Where the acknowledgement of an interrupt (or of --timeout) goes: a view that redraws the
   *  terminal in place shows it among what it draws, or its next redraw would erase it. Default: stderr. */
  announceWith(fn: (line: string) => void): void;
  /** Stops listening; the command's handling (see above) applies again. */
  dispose(): void;
}

export interface InterruptMessages {
  /** Printed on the first interrupt, after what it was ("Interrupt received. "). */
  first: string;
  /** Printed on the second, just before exiting. */
  second: string;
}

export const PLANNING: InterruptMessages = {
  first: "Stopping the refresh; nothing will be changed (press Ctrl-C again to exit at once)...",
  second: "Exiting at once. Nothing was changed.",
};

export const APPLYING: InterruptMessages = {
  first: "Finishing in-flight calls and saving the state; no new change starts (press Ctrl-C again to exit at once)...",
  second: "Exiting at once. The state holds every step saved so far; the next apply converges from it.",
};

export function catchInterrupts(messages: InterruptMessages): Interrupts {
  const controller = new AbortController();
  // Each call in flight and each retry wait listens to the signal: hundreds of listeners at a
  // high --parallelism are expected, not a leak.
  setMaxListeners(0, controller.signal);
  // The command is stopping at once (an interrupt came just before the phase): nothing may start.
  if (exiting) controller.abort();
  let received = 0;
  let flush = () => {};
  let announce: (line: string) => void = (line) => void process.stderr.write(`\n${line}\n`);
  const handler = (cause: InterruptCause) => {
    received++;
    if (received === 1) {
      announce(`${arrival(cause)}. ${messages.first}`);
      controller.abort();
      return;
    }
    flush();
    void exitInterrupted(messages.second);
  };
  const untake = takeSignals(handler);
  const unlink = followTimeout(controller, (line) => announce(line));
  return {
    signal: controller.signal,
    beforeExit: (fn) => (flush = fn),
    announceWith: (fn) => (announce = fn),
    dispose: () => {
      untake();
      unlink();
    },
  };
}

/** Aborts `controller` (as a first Ctrl-C would) when the command's --timeout is reached;
 *  meanwhile the limit does not end the process at once. Returns the unlinking function. */
function followTimeout(controller: AbortController, announce: (line: string) => void): () => void {
  const limit = commandTimeout();
  if (!limit) return () => {};
  const end = handleTimeout();
  const stop = () => {
    if (controller.signal.aborted) return;
    announce(`--timeout ${limit.text} reached: stopping as on Ctrl-C (no new cloud call starts)...`);
    controller.abort(limit.signal.reason);
  };
  if (limit.signal.aborted) stop();
  else limit.signal.addEventListener("abort", stop, { once: true });
  return () => {
    limit.signal.removeEventListener("abort", stop);
    end();
  };
}

export type { Stopped };

export function stoppedBy(signal: AbortSignal): Stopped {
  return !signal.aborted ? false : abortedByTimeout(signal) ? "timeout" : "signal";
}

/** "Apply interrupted", or "Apply stopped by --timeout 2m": how an operation that was cut short is named. */
export function stoppedWords(how: Stopped, operation: string): string {
  return how === "timeout"
    ? `${operation} stopped by --timeout ${commandTimeout()?.text ?? ""}`
    : `${operation} interrupted`;
}

/** Runs `fn` (the refresh and diff) with Ctrl-C caught; `interrupted` says what stopped it meanwhile. */
export async function planning<T>(
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<{ value: T; interrupted: Stopped }> {
  const interrupts = catchInterrupts(PLANNING);
  try {
    const value = await fn(interrupts.signal);
    return { value, interrupted: stoppedBy(interrupts.signal) };
  } finally {
    interrupts.dispose();
  }
}

/** After a plan that an interrupt or --timeout cut short: nothing was changed; returns the exit code. */
export function planInterrupted(how: Stopped = "signal"): number {
  if (how === "timeout") {
    process.stderr.write(`Stopped by --timeout ${commandTimeout()?.text ?? ""} while planning: nothing was changed.\n`);
    return EXIT.error;
  }
  process.stderr.write("Interrupted while planning: nothing was changed.\n");
  return interruptedExit();
}
