// Origins no connection can be made to. Once the last UNREACHABLE_CALLS calls to an origin each
// ended without any HTTP response because no connection could be made (refused, no route, no
// such host, DNS failing), after their retries, every later call to it fails at once, unsent,
// instead of retrying for about ten seconds each: a 1,000-resource plan against a wrong or offline
// endpoint took 135 s and printed 1,080 retry lines. Any HTTP response from the origin, an error
// status too, clears it. A call that fails unsent changed nothing, a write included.
import type { CloudError } from "./errors.js";
import { networkCode } from "./network-errors.js";

export const UNREACHABLE_CALLS = 3;

/** Node's codes for a connection that could not be made at all (nothing was sent). */
const CONNECT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

export class Reachability {
  /** Per origin: the calls in a row that ended unable to connect, and the last one's error. */
  private readonly origins = new Map<string, { calls: number; last: CloudError }>();

  /** The error of the last call that found `origin` unreachable, once it is; else undefined. */
  down(origin: string): CloudError | undefined {
    const o = this.origins.get(origin);
    return o && o.calls >= UNREACHABLE_CALLS ? o.last : undefined;
  }

  /** An HTTP response came from `origin`. */
  responded(origin: string): void {
    this.origins.delete(origin);
  }

  /** A call to `origin` ended (no attempt left) with `err`. */
  ended(origin: string, err: CloudError): void {
    if (!noConnection(err)) return;
    const o = this.origins.get(origin);
    this.origins.set(origin, { calls: (o?.calls ?? 0) + 1, last: err });
  }
}

/** Whether `err` ended a call without any HTTP response because no connection could be made:
 *  the call's own attempts, or (its cause) the calls that found its origin unreachable. */
export function noConnection(err: unknown): boolean {
  return (err as { httpStatus?: unknown } | undefined)?.httpStatus === 0 && CONNECT_CODES.has(networkCode(err) ?? "");
}

/** Whether a failed attempt may have taken effect on the server: the request went out and no
 *  answer said it did not. A 5xx (Google commits a write and then answers 500, 503 or 504), a 2xx
 *  that could not be read, a timeout or a connection lost once made. Not: a 4xx (the server
 *  refused it), a connection that could not be made, a call never sent (no token, interrupted). */
export function outcomeUnknown(err: { status: string; httpStatus: number; cause?: unknown }): boolean {
  if (err.httpStatus >= 500 || (err.httpStatus >= 200 && err.httpStatus < 300)) return true;
  if (err.httpStatus !== 0) return false;
  if (err.status === "DEADLINE_EXCEEDED") return true;
  if (err.status !== "UNAVAILABLE" && err.status !== "UNKNOWN") return false;
  return err.cause !== undefined && !noConnection(err);
}
