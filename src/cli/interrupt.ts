// Ctrl-C (SIGINT) and SIGTERM. One listener for each, for the whole command (`action` starts it
// with catchCommandSignals), hands a signal to the phase that handles it, if one runs:
//  - while a command talks to the cloud (catchInterrupts): the first signal aborts `signal`: the
//    engine starts no new cloud call (calls in flight finish), saves what completed, the lock is
//    released and the command exits 130. A second signal exits at once. The command's --timeout
//    (./deadline.ts) aborts `signal` the same way; the command then exits 1.
//  - while the plain approval prompt waits (views/approval.tsx): a refusal.
// Anywhere else (loading, between the phases while the state lock is held, while a plan or a
// summary is printed, after the apply) a signal stops the command at once: the state locks it
// holds are released, one line goes to stderr, and it exits 130 (for SIGTERM too, as the phases).
import { setMaxListeners } from "node:events";
import { releaseHeldLocks } from "../state/held-locks.js";
import { EXIT } from "./common.js";
import { abortedByTimeout, commandTimeout, handleTimeout } from "./deadline.js";

type SignalHandler = (signal: NodeJS.Signals) => void;

const SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];
/** Longest wait for the locks' release before exiting anyway (a database that does not answer:
 *  its session ends with the process, and with it the lock). */
const RELEASE_WAIT_MS = 3_000;

/** The handlers of the phases running now, innermost last: the last one gets a signal. */
const phases: SignalHandler[] = [];
let commandWide = false;
let listening = false;
let exiting = false;

function dispatch(signal: NodeJS.Signals): void {
  if (exiting) process.exit(EXIT.interrupted); // again while the locks are released: at once
  const phase = phases.at(-1);
  if (phase) phase(signal);
  else void exitInterrupted((released) => `Interrupted (${signal}): stopped${released ? "; the state lock was released" : ""}.`);
}

function listen(on: boolean): void {
  if (on === listening) return;
  listening = on;
  for (const s of SIGNALS) {
    if (on) process.on(s, dispatch);
    else process.off(s, dispatch);
  }
}

/** From now until the process ends, SIGINT and SIGTERM no longer kill it: outside a phase that
 *  handles them, they stop the command (see above). */
export function catchCommandSignals(): void {
  commandWide = true;
  listen(true);
}

/** `handler` gets SIGINT and SIGTERM until the returned function is called. */
export function takeSignals(handler: SignalHandler): () => void {
  phases.push(handler);
  listen(true);
  return () => {
    const i = phases.lastIndexOf(handler);
    if (i >= 0) phases.splice(i, 1);
    if (!phases.length && !commandWide) listen(false);
  };
}

/** Releases the state locks this process holds (waiting RELEASE_WAIT_MS at most), writes `line`
 *  to stderr and exits 130. A further signal meanwhile exits at once. */
export async function exitInterrupted(line: string | ((released: number) => string)): Promise<never> {
  exiting = true;
  let timer: NodeJS.Timeout | undefined;
  const released = await Promise.race([releaseHeldLocks(), new Promise<number>((r) => (timer = setTimeout(() => r(0), RELEASE_WAIT_MS)))]);
  clearTimeout(timer);
  process.stderr.write(`${typeof line === "string" ? line : line(released)}\n`);
  process.exit(EXIT.interrupted);
}

export interface Interrupts {
  /** Aborted by the first signal, or by --timeout (with a TimeoutError reason: see abortedByTimeout). */
  readonly signal: AbortSignal;
  /** Runs before a second signal exits at once (e.g. to flush buffered progress lines). */
  beforeExit(fn: () => void): void;
  /** Stops listening; the command's handling (see above) applies again. */
  dispose(): void;
}

export interface InterruptMessages {
  /** Printed on the first signal. */
  first: string;
  /** Printed on the second, just before exiting. */
  second: string;
}

export const PLANNING: InterruptMessages = {
  first: "Interrupt received. Stopping the refresh; nothing will be changed (press Ctrl-C again to exit at once)...",
  second: "Exiting at once. Nothing was changed.",
};

export const APPLYING: InterruptMessages = {
  first: "Interrupt received. Finishing in-flight calls and saving the state; no new change starts (press Ctrl-C again to exit at once)...",
  second: "Exiting at once. The state holds every step saved so far; the next apply converges from it.",
};

export function catchInterrupts(messages: InterruptMessages): Interrupts {
  const controller = new AbortController();
  // Each call in flight and each retry wait listens to the signal: hundreds of listeners at a
  // high --parallelism are expected, not a leak.
  setMaxListeners(0, controller.signal);
  let received = 0;
  let flush = () => {};
  const handler = () => {
    received++;
    if (received === 1) {
      process.stderr.write(`\n${messages.first}\n`);
      controller.abort();
      return;
    }
    flush();
    void exitInterrupted(messages.second);
  };
  const untake = takeSignals(handler);
  const unlink = followTimeout(controller);
  return {
    signal: controller.signal,
    beforeExit: (fn) => (flush = fn),
    dispose: () => {
      untake();
      unlink();
    },
  };
}

/** Aborts `controller` (as a first Ctrl-C would) when the command's --timeout is reached;
 *  meanwhile the limit does not end the process at once. Returns the unlinking function. */
function followTimeout(controller: AbortController): () => void {
  const limit = commandTimeout();
  if (!limit) return () => {};
  const end = handleTimeout();
  const stop = () => {
    if (controller.signal.aborted) return;
    process.stderr.write(`\n--timeout ${limit.text} reached: stopping as on Ctrl-C (no new cloud call starts)...\n`);
    controller.abort(limit.signal.reason);
  };
  if (limit.signal.aborted) stop();
  else limit.signal.addEventListener("abort", stop, { once: true });
  return () => {
    limit.signal.removeEventListener("abort", stop);
    end();
  };
}

/** What stopped a phase early: a signal (Ctrl-C) or the command's --timeout; false when nothing did. */
export type Stopped = false | "signal" | "timeout";

export function stoppedBy(signal: AbortSignal): Stopped {
  return !signal.aborted ? false : abortedByTimeout(signal) ? "timeout" : "signal";
}

/** "Apply interrupted", or "Apply stopped by --timeout 2m": how an operation that was cut short is named. */
export function stoppedWords(how: Stopped, operation: string): string {
  return how === "timeout" ? `${operation} stopped by --timeout ${commandTimeout()?.text ?? ""}` : `${operation} interrupted`;
}

/** Runs `fn` (the refresh and diff) with Ctrl-C caught; `interrupted` says what stopped it meanwhile. */
export async function planning<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<{ value: T; interrupted: Stopped }> {
  const interrupts = catchInterrupts(PLANNING);
  try {
    const value = await fn(interrupts.signal);
    return { value, interrupted: stoppedBy(interrupts.signal) };
  } finally {
    interrupts.dispose();
  }
}

/** After a plan that a signal or --timeout cut short: nothing was changed; returns the exit code. */
export function planInterrupted(how: Stopped = "signal"): number {
  if (how === "timeout") {
    process.stderr.write(`Stopped by --timeout ${commandTimeout()?.text ?? ""} while planning: nothing was changed.\n`);
    return EXIT.error;
  }
  process.stderr.write("Interrupted while planning: nothing was changed.\n");
  return EXIT.interrupted;
}
