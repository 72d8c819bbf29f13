// One attempt's outcome, from what came back: a response (parsed, shape checked, or the error it
// carries, with its Retry-After) or an exception (a timeout, a network error; retryable or not).
import {
  type CloudError,
  type CloudErrorInit,
  RETRYABLE_CODES,
  canonicalFromHttp,
  parseErrorBody,
  retryDelayFromDetails,
} from "./errors.js";
import { type HttpResponse, RESPONSE_TOO_LARGE } from "./http.js";
import { formatMs, isTimeout, networkCode, networkMessage, RETRYABLE_NETWORK_CODES } from "./network-errors.js";
import { parseRetryAfter } from "./retry.js";

/** The failure of one attempt; `retryAfterMs` is the wait the server asked for, if any. */
export type Failure = { ok: false; error: CloudError; retryAfterMs?: number | undefined };
/** How one attempt went: the parsed body of a success, or the failure. */
export type Outcome = { ok: true; value: unknown; httpStatus: number } | Failure;
/** Makes the call's failure (the transport's CloudError, secrets scrubbed). */
export type Fail = (status: string, httpStatus: number, message: string, extra?: Partial<CloudErrorInit>) => Failure;

/** What of a call (./transport.ts's CallSpec) decides its response's outcome. */
export interface ResponseRules {
  /** Checks a successful response's shape; a problem fails the call (not retried). */
  check?: ((value: unknown) => string | undefined) | undefined;
  /** Safe to repeat: INTERNAL (500) is retried too. */
  idempotent?: boolean | undefined;
}

/** A response as the call's outcome: the parsed body of a 2xx (shape checked), else the error
 *  (`now` reads an HTTP-date Retry-After). */
export function responseOutcome(
  spec: ResponseRules,
  res: HttpResponse,
  text: string,
  fail: Fail,
  now: number,
): Outcome {
  if (res.status >= 200 && res.status < 300) {
    let value: unknown = {};
    if (text.trim() !== "") {
      try {
        value = JSON.parse(text);
      } catch (e) {
        return fail("UNKNOWN", res.status, `the response is not valid JSON (${(e as Error).message})`, {
          retryable: false,
        });
      }
    }
    const problem = spec.check?.(value);
    if (problem) return fail("UNKNOWN", res.status, problem, { retryable: false });
    return { ok: true, value, httpStatus: res.status };
  }
  const parsed = parseErrorBody(text);
  const status = parsed.status ?? canonicalFromHttp(res.status);
  const message = parsed.message ?? (res.statusText || `HTTP ${res.status}`);
  const retryable = RETRYABLE_CODES.has(status) || (status === "INTERNAL" && spec.idempotent === true);
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), now) ?? retryDelayFromDetails(parsed.details);
  return { ...fail(status, res.status, message, { details: parsed.details, retryable }), retryAfterMs };
}

/** A request that got no usable response as the attempt's failure: a timeout (the attempt's own,
 *  or what was left of the call's when that was shorter than `timeoutMs`), a network error. */
export function transportFailure(
  e: unknown,
  timedOut: boolean,
  attemptMs: number,
  timeoutMs: number,
  fail: Fail,
): Failure {
  if (timedOut || isTimeout(e)) {
    const which = attemptMs < timeoutMs ? "" : " (per-attempt timeout)";
    return fail("DEADLINE_EXCEEDED", 0, `no complete response within ${formatMs(attemptMs)}${which}`, {
      retryable: true,
    });
  }
  const code = networkCode(e);
  const msg = networkMessage(e);
  if (code === RESPONSE_TOO_LARGE) return fail("UNKNOWN", 0, msg, { retryable: false });
  if (code && RETRYABLE_NETWORK_CODES.has(code))
    return fail("UNAVAILABLE", 0, `network error ${code}: ${msg}`, { retryable: true, cause: e });
  if (code === "ENOTFOUND") return fail("UNAVAILABLE", 0, `host not found: ${msg}`, { retryable: false, cause: e });
  if (!code && e instanceof TypeError && /fetch failed|terminated|other side closed|socket/i.test(e.message)) {
    return fail("UNAVAILABLE", 0, `network error: ${msg}`, { retryable: true, cause: e });
  }
  return fail(code ? "UNAVAILABLE" : "UNKNOWN", 0, code ? `network error ${code}: ${msg}` : msg, {
    retryable: false,
    cause: e,
  });
}
