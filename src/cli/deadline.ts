// --timeout: the whole command's time limit. When it is reached the command stops as a first
// Ctrl-C stops it: inside a phase that handles interrupts (the refresh, the apply, import's read)
// the phase's signal aborts, nothing new is sent, what completed is saved, the lock is released,
// and the command exits 1 saying so; in any other phase (where Ctrl-C would end the process at
// once) it exits 1 at once. A timer that does not keep the process alive.
import { setMaxListeners } from "node:events";
import { error, UserError } from "../diagnostics/diagnostic.js";
import { EXIT } from "./exit-codes.js";

export interface CommandTimeout {
  /** Aborts, with a TimeoutError naming the limit as its reason, when the limit is reached. */
  signal: AbortSignal;
  /** The limit as the user wrote it ("2s"). */
  text: string;
}

let current: CommandTimeout | undefined;
let handlers = 0;

/** Starts the time limit `text` (a duration; none when undefined). Call once, before the command runs. */
export function startCommandTimeout(text: string | undefined): void {
  const ms = durationMs(text, "--timeout");
  if (ms === undefined || text === undefined) return;
  if (ms < 1) throw new UserError(error(`--timeout must be more than 0, got "${text}"`));
  const controller = new AbortController();
  // Every call in flight may listen to it (through the interrupt signal it is linked to).
  setMaxListeners(0, controller.signal);
  current = { signal: controller.signal, text };
  const reason = Object.assign(new Error(`--timeout ${text} reached`), { name: "TimeoutError" });
  setTimeout(() => {
    controller.abort(reason);
    if (handlers > 0) return;
    process.stderr.write(`converge: --timeout ${text} reached: stopped.\n`);
    process.exit(EXIT.error);
  }, ms).unref();
}

/** The running command's time limit, if it has one. */
export function commandTimeout(): CommandTimeout | undefined {
  return current;
}

/** Begins a phase that handles the time limit through the signal (no exit at once until the
 *  returned function ends it). */
export function handleTimeout(): () => void {
  handlers++;
  let ended = false;
  return () => {
    if (!ended) handlers--;
    ended = true;
  };
}

/** Runs `fn` as a phase that handles the time limit through the signal. */
export async function handlingTimeout<T>(fn: () => Promise<T>): Promise<T> {
  const end = handleTimeout();
  try {
    return await fn();
  } finally {
    end();
  }
}

/** Whether `signal` was aborted by the time limit (rather than by Ctrl-C). */
export function abortedByTimeout(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof Error && reason.name === "TimeoutError";
}

/** "30s", "2m", "500ms" or plain milliseconds; `flag` names the option in the error. */
export function durationMs(text: string | undefined, flag = "--lock-timeout"): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) {
    throw new UserError({ severity: "error", summary: `${flag} "${text}" is not a duration (e.g. 30s, 2m, 500ms)` });
  }
  const n = Number(m[1]);
  return Math.round(m[2] === "h" ? n * 3_600_000 : m[2] === "m" ? n * 60_000 : m[2] === "s" ? n * 1000 : n);
}
