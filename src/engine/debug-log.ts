// CONVERGE_LOG=debug: a line per cloud call attempt and per policy read-modify-write round, for
// finding out why a run is slow or failing (Terraform's TF_LOG / TF_LOG_PATH). Names what was
// called and what came back; never headers, bodies or tokens.
import { appendFileSync, chmodSync, closeSync, openSync } from "node:fs";
import type { CloudEvent } from "../cloud/client.js";
import { UserError, error } from "../diagnostics/diagnostic.js";

const OFF = new Set(["", "0", "off", "false", "none"]);

const short = (methodId: string) => methodId.slice(methodId.lastIndexOf(".") + 1);

/** One log line for a cloud event (without the timestamp). */
export function debugLine(e: CloudEvent): string {
  if (e.type === "attempt") {
    const outcome = e.status === "OK" ? `${e.httpStatus} OK` : `${e.httpStatus || "no response"} ${e.status}`;
    const retry = e.retry ? `; retrying in ${((e.delayMs ?? 0) / 1000).toFixed(1)}s` : "";
    return `${short(e.methodId)} ${e.resource}: ${outcome} in ${Math.round(e.ms)} ms (attempt ${e.attempt} of ${e.maxAttempts})${retry}`;
  }
  const wait = e.delayMs !== undefined ? `; again in ${(e.delayMs / 1000).toFixed(1)}s` : "";
  return `read-modify-write ${e.resource}: round ${e.round} of ${e.maxRounds}: ${e.outcome === "aborted" ? "etag conflict (409 ABORTED)" : e.outcome}${wait}`;
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
    // Created 0600 like the state: the log names the objects and members a stack manages.
    try {
      closeSync(openSync(path, "a", 0o600));
      chmodSync(path, 0o600);
    } catch (e) {
      throw new UserError(error(`CONVERGE_LOG_PATH: cannot write the debug log ${path}: ${(e as Error).message}`));
    }
    write = (text) => appendFileSync(path, text);
  }
  return (e) => write(`${new Date().toISOString()} [DEBUG] ${debugLine(e)}\n`);
}
