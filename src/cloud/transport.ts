// One REST call with a total deadline, per-attempt timeouts, retries (backoff + full jitter,
// Retry-After) and attempt events. HTTP goes through ./http.ts (node:http keep-alive agents).
import { TOOL_VERSION } from "../base/version.js";
import type { CloudEvent } from "./cloud-events.js";
import { AuthError, type TokenProvider } from "./auth.js";
import type { ResolvedEndpoint, Service } from "./endpoint.js";
import { outcomeUnknown, Reachability, UNREACHABLE_CALLS } from "./reachability.js";
import { CloudError, type CloudErrorInit, interruptedError, redact, redactDeep } from "./errors.js";
import { type HttpFn, type HttpResponse, MAX_RESPONSE_BYTES, nodeHttp, responseTooLarge } from "./http.js";
import { formatMs, untilAborted } from "./network-errors.js";
import { attemptSignal } from "./attempt-signal.js";
import { backoffDelay, retryOptions, waitUnlessAborted, type RetryOptions } from "./retry.js";
import type { RateLimiter } from "./rate-limit.js";
import { type Fail, type Failure, type Outcome, responseOutcome, transportFailure } from "./attempt-outcome.js";
import { paced, takeTokens } from "./call-pacing.js";

export interface TransportOptions {
  endpoint: ResolvedEndpoint;
  tokens: TokenProvider;
  /** Per-attempt timeout (ms); default 30 s. A timeout is DEADLINE_EXCEEDED and is retried. */
  timeoutMs?: number;
  /** Total deadline of one call, every attempt and wait included (ms); default 2 minutes. */
  callTimeoutMs?: number;
  /** Text to scrub from every message besides the tokens: proxy and endpoint credentials. */
  secrets?: readonly string[];
  retry?: Partial<RetryOptions>;
  onEvent?: (e: CloudEvent) => void;
  /** The HTTP function: node:http by default; any fetch-compatible function works (test fakes). */
  fetch?: HttpFn;
  /** Clock (ms) for elapsed times and HTTP-date Retry-After; injectable for tests. */
  now?: () => number;
  /** Paces calls per (service, project); none: unpaced. */
  limiter?: RateLimiter;
}

export interface CallSpec {
  method: "GET" | "POST";
  service: Service;
  /** Location, for regional hosts. */
  location?: string;
  /**
   * Path and query, e.g. `/v1/projects/p/…/restorePlans/x:getIamPolicy?options.requestedPolicyVersion=3`. Sent
   * verbatim.
   */
  path: string;
  /** JSON body (POST only); undefined sends an empty body. */
  body?: unknown;
  methodId: string;
  resource: string;
  /** Short name for messages: getIamPolicy, setIamPolicy, getFederation. */
  operation: string;
  /**
   * Once aborted (Ctrl-C), no attempt starts: the call rejects with a CANCELLED CloudError
   * (interruptedError) instead of sending or retrying, and a retry wait ends at once. An attempt
   * already sent is left to finish, unless `abandon` is set.
   */
  signal?: AbortSignal;
  /** For reads, which change nothing: an abort also abandons the attempt in flight. */
  abandon?: boolean;
  /** Safe to repeat (a read, or a write guarded by an etag): INTERNAL (500) is retried too. */
  idempotent?: boolean;
  /** Checks a successful response's shape; a problem fails the call (not retried). */
  check?: (value: unknown) => string | undefined;
  /** The project the call's quota is charged to: paced by the limiter when set. */
  project?: string;
  /** A write (setIamPolicy): also takes from the service's write bucket, when it has one. */
  write?: boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CALL_TIMEOUT_MS = 120_000;
const USER_AGENT = `converge/${TOOL_VERSION}`;

export class Transport {
  readonly endpoint: ResolvedEndpoint;
  readonly retry: RetryOptions;
  readonly timeoutMs: number;
  readonly callTimeoutMs: number;
  private readonly tokens: TokenProvider;
  private readonly secrets: readonly string[];
  private readonly fetchFn: HttpFn;
  private readonly onEvent: ((e: CloudEvent) => void) | undefined;
  private readonly now: () => number;
  private readonly limiter: RateLimiter | undefined;

  constructor(opts: TransportOptions) {
    this.endpoint = opts.endpoint;
    this.tokens = opts.tokens;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0, got ${this.timeoutMs}`);
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    if (!(this.callTimeoutMs > 0)) throw new RangeError(`callTimeoutMs must be > 0, got ${this.callTimeoutMs}`);
    this.secrets = opts.secrets ?? [];
    this.retry = retryOptions(opts.retry);
    this.fetchFn = opts.fetch ?? nodeHttp;
    this.onEvent = opts.onEvent;
    this.now = opts.now ?? Date.now;
    this.limiter = opts.limiter;
  }

  /** Reports an event to the hook; a throwing hook never breaks a call. */
  emit(e: CloudEvent): void {
    if (!this.onEvent) return;
    try {
      this.onEvent(e);
    } catch {
      // ignore
    }
  }

  /**
   * Performs the call, retrying transient failures until the attempts or the call's deadline
   * run out; resolves with the parsed JSON body. A failure after retries says how many attempts
   * were made over how long, and why no more (the deadline, a Retry-After beyond it).
   */
  async call<T>(spec: CallSpec): Promise<T> {
    const start = this.now();
    const deadline = start + this.callTimeoutMs;
    const r = this.retry;
    let last: CloudError | undefined;
    const buckets =
      this.limiter && spec.project !== undefined
        ? this.limiter.bucketsFor(spec.service, spec.project, spec.write === true)
        : [];
    const origin = this.originOf(spec);
    // Whether an attempt so far may have taken effect (a write answered 503 may have landed): the
    // call's error says so, whatever its last attempt found.
    let uncertain = false;
    for (let attempt = 1; ; attempt++) {
      // A call that cannot be sent fails before it takes a turn at the service's rate, and again
      // after waiting for one (the origin may have been found unreachable meanwhile).
      let unsent = this.unsendable(spec, origin, attempt, last, start);
      if (unsent) throw marked(unsent, uncertain);
      const waiting = takeTokens(buckets, spec.signal, last?.status === "RESOURCE_EXHAUSTED");
      if (waiting) await waiting;
      if (spec.signal?.aborted)
        throw interruptedError(
          spec,
          last ? `not retried after ${attempt - 1} attempts (last: ${last.status})` : "not sent",
          last,
          uncertain,
        );
      if ((unsent = this.unsendable(spec, origin, attempt, last, start))) throw marked(unsent, uncertain);
      const t0 = this.now();
      // The last attempt gets what is left of the call's time, not a full per-attempt timeout.
      const attemptMs = Math.max(1, Math.min(this.timeoutMs, deadline - t0));
      const outcome = await this.once(spec, attemptMs, origin);
      const ms = this.now() - t0;
      paced(buckets, outcome);
      if (origin !== undefined && (outcome.ok || outcome.error.httpStatus > 0)) this.reachability.responded(origin);
      const answered = { methodId: spec.methodId, resource: spec.resource, attempt, maxAttempts: r.maxAttempts, ms };
      if (outcome.ok) {
        this.emit({ type: "attempt", ...answered, status: "OK", httpStatus: outcome.httpStatus, retry: false });
        return outcome.value as T;
      }
      const err = (last = outcome.error);
      uncertain ||= outcomeUnknown(err);
      const next = this.nextWait(err, outcome.retryAfterMs, attempt, deadline);
      const retry = next.delayMs !== undefined;
      this.emit({
        type: "attempt",
        ...answered,
        status: err.status,
        httpStatus: err.httpStatus,
        retry,
        ...(retry ? { delayMs: next.delayMs } : {}),
      });
      if (!retry) {
        const final =
          attempt > 1 || next.note || uncertain !== err.uncertain
            ? err.withAttempts(attempt, this.now() - start, next.note, uncertain)
            : err;
        if (origin !== undefined) this.reachability.ended(origin, final);
        throw final;
      }
      await waitUnlessAborted(r.sleep, next.delayMs!, spec.signal);
    }
  }

  /** Origins no connection could be made to (./reachability.ts). */
  private readonly reachability = new Reachability();

  /**
   * Where the call goes ("https://gkebackup.googleapis.com"); undefined when that cannot be worked out (the attempt
   * then says why).
   */
  private originOf(spec: CallSpec): string | undefined {
    try {
      return this.endpoint.baseUrl(spec.service, spec.location);
    } catch {
      return undefined;
    }
  }

  /** Why the call cannot be sent at all, if so: its origin was found unreachable, or no access
   *  token can be had (the token provider's first search failed). */
  private unsendable(
    spec: CallSpec,
    origin: string | undefined,
    attempt: number,
    last: CloudError | undefined,
    start: number,
  ): CloudError | undefined {
    const gone = origin !== undefined ? this.reachability.down(origin) : undefined;
    if (gone) return this.unreachable(spec, origin!, gone, attempt, last, this.now() - start);
    const noToken = this.tokens.failure?.();
    return noToken ? this.cloudError(spec, "UNAUTHENTICATED", 0, noToken.message, { retryable: false }) : undefined;
  }

  /** The call's error, every secret known scrubbed from the message and the server's details. */
  private cloudError(
    spec: CallSpec,
    status: string,
    httpStatus: number,
    message: string,
    extra: Partial<CloudErrorInit> = {},
  ): CloudError {
    const secrets = [...this.tokens.secrets(), ...this.secrets];
    // The server's details too: a caller of the SDK may log them.
    const details = extra.details ? { details: redactDeep(extra.details, secrets) as unknown[] } : {};
    return new CloudError({
      status,
      httpStatus,
      methodId: spec.methodId,
      resource: spec.resource,
      operation: spec.operation,
      serverMessage: redact(message, secrets),
      ...extra,
      ...details,
    });
  }

  /** The error of a call to an origin found unreachable: not sent, or (a retry) not retried. */
  private unreachable(
    spec: CallSpec,
    origin: string,
    gone: CloudError,
    attempt: number,
    last: CloudError | undefined,
    elapsedMs: number,
  ): CloudError {
    const why = `${origin} could not be reached by the last ${UNREACHABLE_CALLS} calls to it`;
    if (last) return last.withAttempts(attempt - 1, elapsedMs, `not retried: ${redact(why, this.secrets)}`);
    return new CloudError({
      status: "UNAVAILABLE",
      httpStatus: 0,
      methodId: spec.methodId,
      resource: spec.resource,
      operation: spec.operation,
      serverMessage: redact(`not sent: ${why} (${gone.serverMessage})`, [...this.tokens.secrets(), ...this.secrets]),
      attempts: 0,
      retryable: false,
      // What made the origin unreachable: its network error code stays readable (networkCode).
      cause: gone,
    });
  }

  /** The wait before the next attempt, or none (with the reason when it is the call's deadline). */
  private nextWait(
    err: CloudError,
    retryAfterMs: number | undefined,
    attempt: number,
    deadline: number,
  ): { delayMs?: number; note?: string } {
    if (!err.retryable || attempt >= this.retry.maxAttempts) return {};
    const delayMs =
      retryAfterMs !== undefined
        ? Math.min(retryAfterMs, this.retry.maxRetryAfterMs)
        : backoffDelay(attempt, this.retry);
    // After the wait, the next attempt must have a useful part of the call's time left.
    const left = deadline - this.now() - Math.min(1_000, this.callTimeoutMs / 10);
    const limit = `call timeout ${formatMs(this.callTimeoutMs)}`;
    if (left <= 0) return { note: limit };
    if (delayMs >= left)
      return {
        note: retryAfterMs !== undefined ? `Retry-After ${formatMs(retryAfterMs)} is beyond the ${limit}` : limit,
      };
    return { delayMs };
  }

  /** One attempt; `origin` is the call's (originOf), worked out again here only when it could not be. */
  private async once(spec: CallSpec, attemptMs: number, origin: string | undefined): Promise<Outcome> {
    const fail: Fail = (status, httpStatus, message, extra = {}) => ({
      ok: false,
      error: this.cloudError(spec, status, httpStatus, message, extra),
    });

    let url: string;
    try {
      url = (origin ?? this.endpoint.baseUrl(spec.service, spec.location)) + spec.path;
    } catch (e) {
      return fail("INVALID_ARGUMENT", 0, e instanceof Error ? e.message : String(e), { retryable: false });
    }

    const abandon = spec.abandon && spec.signal ? spec.signal : undefined;
    const signal = attemptSignal(attemptMs, abandon);
    let res: HttpResponse;
    let text: string;
    try {
      const known = this.fixedToken;
      const prepared = known
        ? { headers: requestHeaders(spec, known.token) }
        : await this.headers(spec, signal.signal, fail);
      if ("error" in prepared) return prepared;
      const headers = prepared.headers;
      const body = spec.method === "POST" && spec.body !== undefined ? JSON.stringify(spec.body) : undefined;
      res = await this.fetchFn(url, {
        method: spec.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: signal.signal,
      });
      text = await res.text();
      if (text.length > MAX_RESPONSE_BYTES) throw responseTooLarge();
    } catch (e) {
      if (abandon?.aborted) return { ok: false, error: interruptedError(spec, "abandoned in flight", e) };
      return transportFailure(e, signal.timedOut(), attemptMs, this.timeoutMs, fail);
    } finally {
      signal.dispose();
    }
    return responseOutcome(spec, res, text, fail, this.now());
  }

  /** The token of a provider whose token never changes, once it was read (headers then need no wait). */
  private fixedToken: { token: string | undefined } | undefined;

  /** The request headers, with the access token (waited for no longer than the attempt). */
  private async headers(
    spec: CallSpec,
    signal: AbortSignal,
    fail: Fail,
  ): Promise<{ headers: Record<string, string> } | Failure> {
    let token: string | undefined;
    try {
      // A token that never changes is there at once: no need to race it against the attempt.
      if (signal.aborted) throw signal.reason;
      token = await (this.tokens.fixed ? this.tokens.getToken() : untilAborted(this.tokens.getToken(), signal));
    } catch (e) {
      if (signal.aborted) throw e;
      const msg =
        e instanceof AuthError
          ? e.message
          : `could not get an access token: ${e instanceof Error ? e.message : String(e)}`;
      return fail("UNAUTHENTICATED", 0, msg, { retryable: false });
    }
    if (this.tokens.fixed) this.fixedToken = { token };
    return { headers: requestHeaders(spec, token) };
  }
}

function requestHeaders(spec: CallSpec, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { "User-Agent": USER_AGENT, Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (spec.method === "POST") headers["Content-Type"] = "application/json";
  return headers;
}

/** `err`, or a copy that says an earlier attempt may have taken effect. */
function marked(err: CloudError, uncertain: boolean): CloudError {
  return uncertain && !err.uncertain ? err.withAttempts(err.attempts, err.elapsedMs, err.note, true) : err;
}
