// CONVERGE_LOG=debug: a line per cloud call attempt and per policy read-modify-write round, for
// finding out why a run is slow or failing (Terraform's TF_LOG / TF_LOG_PATH). Names what was
// called and what came back; never headers, bodies or tokens.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  realpathSync,
  statSync,
  writeSync,
  type Stats,
} from "node:fs";
import type { CloudEvent } from "../cloud/client.js";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { terminalText } from "../diagnostics/terminal-text.js";
import { notRegularError, type FileRole } from "../fs/regular-files.js";
import { redactText } from "../config/redact.js";

const OFF = new Set(["", "0", "off", "false", "none"]);

const short = (methodId: string) => methodId.slice(methodId.lastIndexOf(".") + 1);

/** One log line for a cloud event (without the timestamp). */
/** How a read-modify-write round ended, where the outcome's name says too little. */
const ROUND_OUTCOMES: Readonly<Record<string, string>> = {
  aborted: "etag conflict (409 ABORTED)",
  lost: "the write's answer was lost (it may have landed): reading the policy again",
};

export function debugLine(e: CloudEvent): string {
  if (e.type === "attempt") {
    const outcome = e.status === "OK" ? `${e.httpStatus} OK` : `${e.httpStatus || "no response"} ${e.status}`;
    const retry = e.retry ? `; retrying in ${((e.delayMs ?? 0) / 1000).toFixed(1)}s` : "";
    return (
      `${short(e.methodId)} ${e.resource}: ${outcome} in ${Math.round(e.ms)} ms ` +
      `(attempt ${e.attempt} of ${e.maxAttempts})${retry}`
    );
  }
  const wait = e.delayMs !== undefined ? `; again in ${(e.delayMs / 1000).toFixed(1)}s` : "";
  return (
    `read-modify-write ${e.resource}: round ${e.round} of ${e.maxRounds}: ` +
    `${ROUND_OUTCOMES[e.outcome] ?? e.outcome}${wait}`
  );
}

const LOG_FILE: FileRole = {
  what: "CONVERGE_LOG_PATH: the debug log",
  detail:
    "Name a regular file (converge appends to it and makes it mode 0600), or unset CONVERGE_LOG_PATH to log to stderr.",
};

/** Opening a FIFO does not wait for a reader; a terminal is never made the controlling one. */
const APPEND =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

function refuseSpecial(path: string, st: Stats): void {
  if (st.isFile()) return;
  let target: string | undefined;
  try {
    target = lstatSync(path).isSymbolicLink() ? realpathSync(path) : undefined;
  } catch {
    target = undefined;
  }
  throw notRegularError(LOG_FILE, path, st, target);
}

/**
 * The log file, opened for appending and made 0600 (it names the objects and members a stack
 * manages). A FIFO, a device or a directory is refused before it is opened (and checked again
 * once open): it would block, be written to, or be chmodded.
 */
function openLogFile(path: string): number {
  const cannot = (e: unknown) =>
    e instanceof UserError
      ? e
      : new UserError(error(`CONVERGE_LOG_PATH: cannot write the debug log ${path}: ${(e as Error).message}`));
  let fd: number;
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st) refuseSpecial(path, st);
    fd = openSync(path, APPEND, 0o600);
  } catch (e) {
    throw cannot(e);
  }
  try {
    refuseSpecial(path, fstatSync(fd));
    fchmodSync(fd, 0o600);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw cannot(e);
  }
}

/**
 * The debug logger the environment asks for, or undefined. CONVERGE_LOG (any value but off/0/
 * false) turns it on; CONVERGE_LOG_PATH sends it to that file (appended, mode 0600) instead of
 * stderr.
 */
export function debugLogger(env: NodeJS.ProcessEnv): ((e: CloudEvent) => void) | undefined {
  const level = env.CONVERGE_LOG?.trim().toLowerCase();
  if (level === undefined || OFF.has(level)) return undefined;
  const path = env.CONVERGE_LOG_PATH?.trim();
  let write = (text: string): void => {
    process.stderr.write(text);
  };
  if (path) {
    // Kept open: appending by name would open whatever is at the path by then.
    const fd = openLogFile(path);
    write = (text) => void writeSync(fd, text);
  }
  // Names come from the stack and statuses from the server: one printable line each.
  return (e) => write(`${new Date().toISOString()} [DEBUG] ${redactText(terminalText(debugLine(e)))}\n`);
}
