// One REST call with per-attempt timeouts, retries (backoff + full jitter, Retry-After) and
// attempt events. HTTP goes through ./http.ts (node:http keep-alive agents).
import { TOOL_VERSION } from "../version.js";
import { AuthError, type TokenProvider } from "./auth.js";
import type { ResolvedEndpoint, Service } from "./endpoint.js";
import { CloudError, type CloudErrorInit, canonicalFromHttp, interruptedError, parseErrorBody, redact, retryDelayFromDetails } from "./errors.js";
import { type HttpFn, type HttpResponse, nodeHttp } from "./http.js";
import { backoffDelay, parseRetryAfter, retryOptions, waitUnlessAborted, type RetryOptions } from "./retry.js";

/** One HTTP attempt of one call. `status` is "OK" or the canonical error code. */
export interface AttemptEvent {
  type: "attempt";
  methodId: string;
  resource: string;
  /** 1 for the first try. */
  attempt: number;
  /** The most attempts this call will make. */
  maxAttempts: number;
  status: string;
  /** HTTP status, 0 when no response was received. */
  httpStatus: number;
  /** Duration of this attempt. */
  ms: number;
  /** True when the transport will try again. */
  retry: boolean;
  /** The wait before the next attempt, when retrying. */
  delayMs?: number;
}

/** One read-modify-write round of the policy engine. */
export interface PolicyRoundEvent {
  type: "policy";
  kind: "restorePlan" | "endpoint";
  resource: string;
  /** 1 for the first round. */
  round: number;
  /** The most rounds this modification will make. */
  maxRounds: number;
  /** written: set succeeded; unchanged: nothing to write; aborted: etag conflict (409), will re-read unless it was the last round. */
  outcome: "written" | "unchanged" | "aborted";
  /** Wait before the next round (aborted only, when retrying). */
  delayMs?: number;
}

export type CloudEvent = AttemptEvent | PolicyRoundEvent;

export interface TransportOptions {
  endpoint: ResolvedEndpoint;
  tokens: TokenProvider;
  /** Per-attempt timeout (ms); default 30 s. A timeout is DEADLINE_EXCEEDED and is retried. */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  onEvent?: (e: CloudEvent) => void;
  /** The HTTP function: node:http by default; any fetch-compatible function works (test fakes). */
  fetch?: HttpFn;
  /** Clock (ms) for elapsed times and HTTP-date Retry-After; injectable for tests. */
  now?: () => number;
}

export interface CallSpec {
  method: "GET" | "POST";
  service: Service;
  /** Location, for regional hosts. */
  location?: string;
  /** Path and query, e.g. `/v1/projects/p/…/restorePlans/x:getIamPolicy?options.requestedPolicyVersion=3`. Sent verbatim. */
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
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const USER_AGENT = `converge/${TOOL_VERSION}`;

/** Error codes of connection-level failures worth another try. */
const RETRYABLE_NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

type Failure = { ok: false; error: CloudError; retryAfterMs?: number | undefined };
type Outcome = { ok: true; value: unknown; httpStatus: number } | Failure;
type Fail = (status: string, httpStatus: number, message: string, extra?: Partial<CloudErrorInit>) => Failure;

export class Transport {
  readonly endpoint: ResolvedEndpoint;
  readonly retry: RetryOptions;
  readonly timeoutMs: number;
  private readonly tokens: TokenProvider;
  private readonly fetchFn: HttpFn;
  private readonly onEvent: ((e: CloudEvent) => void) | undefined;
  private readonly now: () => number;

  constructor(opts: TransportOptions) {
    this.endpoint = opts.endpoint;
    this.tokens = opts.tokens;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0, got ${this.timeoutMs}`);
    this.retry = retryOptions(opts.retry);
    this.fetchFn = opts.fetch ?? nodeHttp;
    this.onEvent = opts.onEvent;
    this.now = opts.now ?? Date.now;
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

  /** Performs the call, retrying transient failures; resolves with the parsed JSON body. */
  async call<T>(spec: CallSpec): Promise<T> {
    const start = this.now();
    const r = this.retry;
    let last: CloudError | undefined;
    for (let attempt = 1; ; attempt++) {
      if (spec.signal?.aborted) throw interruptedError(spec, last ? `not retried after ${attempt - 1} attempts (last: ${last.status})` : "not sent", last);
      const t0 = this.now();
      const outcome = await this.once(spec);
      const ms = this.now() - t0;
      if (outcome.ok) {
        this.emit({ type: "attempt", methodId: spec.methodId, resource: spec.resource, attempt, maxAttempts: r.maxAttempts, status: "OK", httpStatus: outcome.httpStatus, ms, retry: false });
        return outcome.value as T;
      }
      const err = (last = outcome.error);
      const retry = err.retryable && attempt < r.maxAttempts;
      const delayMs = retry
        ? outcome.retryAfterMs !== undefined
          ? Math.min(outcome.retryAfterMs, r.maxRetryAfterMs)
          : backoffDelay(attempt, r)
        : undefined;
      this.emit({
        type: "attempt",
        methodId: spec.methodId,
        resource: spec.resource,
        attempt,
        maxAttempts: r.maxAttempts,
        status: err.status,
        httpStatus: err.httpStatus,
        ms,
        retry,
        ...(delayMs !== undefined ? { delayMs } : {}),
      });
      if (!retry) throw attempt > 1 ? err.withAttempts(attempt, this.now() - start) : err;
      await waitUnlessAborted(r.sleep, delayMs!, spec.signal);
    }
  }

  private async once(spec: CallSpec): Promise<Outcome> {
    const fail: Fail = (status, httpStatus, message, extra = {}) => ({
      ok: false,
      error: new CloudError({
        status,
        httpStatus,
        methodId: spec.methodId,
        resource: spec.resource,
        operation: spec.operation,
        serverMessage: redact(message, this.tokens.secrets()),
        ...extra,
      }),
    });

    let url: string;
    try {
      url = this.endpoint.baseUrl(spec.service, spec.location) + spec.path;
    } catch (e) {
      return fail("INVALID_ARGUMENT", 0, e instanceof Error ? e.message : String(e), { retryable: false });
    }

    const headers: Record<string, string> = { "User-Agent": USER_AGENT, Accept: "application/json" };
    let token: string | undefined;
    try {
      token = await this.tokens.getToken();
    } catch (e) {
      const msg = e instanceof AuthError ? e.message : `could not get an access token: ${e instanceof Error ? e.message : String(e)}`;
      return fail("UNAUTHENTICATED", 0, msg, { retryable: false });
    }
    if (token) headers.Authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (spec.method === "POST") {
      headers["Content-Type"] = "application/json";
      if (spec.body !== undefined) body = JSON.stringify(spec.body);
    }

    const timeout = AbortSignal.timeout(this.timeoutMs);
    const abandon = spec.abandon && spec.signal ? spec.signal : undefined;
    const signal = abandon ? eitherAborts(timeout, abandon) : { signal: timeout, dispose: () => {} };
    let text: string;
    let res: HttpResponse;
    try {
      res = await this.fetchFn(url, { method: spec.method, headers, ...(body !== undefined ? { body } : {}), signal: signal.signal });
      text = await res.text();
    } catch (e) {
      if (abandon?.aborted) return { ok: false, error: interruptedError(spec, "abandoned in flight", e) };
      return this.transportFailure(e, timeout, fail);
    } finally {
      signal.dispose();
    }

    if (res.status >= 200 && res.status < 300) {
      if (text.trim() === "") return { ok: true, value: {}, httpStatus: res.status };
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not an object");
        return { ok: true, value, httpStatus: res.status };
      } catch {
        return fail("UNKNOWN", res.status, `response is not a JSON object: ${text.slice(0, 120)}`, { retryable: false });
      }
    }

    const parsed = parseErrorBody(text);
    const status = parsed.status ?? canonicalFromHttp(res.status);
    const message = parsed.message ?? (res.statusText || `HTTP ${res.status}`);
    const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), this.now()) ?? retryDelayFromDetails(parsed.details);
    return { ...fail(status, res.status, message, { details: parsed.details }), retryAfterMs };
  }

  private transportFailure(e: unknown, signal: AbortSignal, fail: Fail): Failure {
    if (signal.aborted || isTimeout(e)) {
      return fail("DEADLINE_EXCEEDED", 0, `no response within ${formatMs(this.timeoutMs)} (per-attempt timeout)`, { retryable: true });
    }
    const code = networkCode(e);
    const msg = networkMessage(e);
    if (code && RETRYABLE_NETWORK_CODES.has(code)) return fail("UNAVAILABLE", 0, `network error ${code}: ${msg}`, { retryable: true, cause: e });
    if (code === "ENOTFOUND") return fail("UNAVAILABLE", 0, `host not found: ${msg}`, { retryable: false, cause: e });
    if (!code && e instanceof TypeError && /fetch failed|terminated|other side closed|socket/i.test(e.message)) {
      return fail("UNAVAILABLE", 0, `network error: ${msg}`, { retryable: true, cause: e });
    }
    return fail(code ? "UNAVAILABLE" : "UNKNOWN", 0, code ? `network error ${code}: ${msg}` : msg, { retryable: false, cause: e });
  }
}

/** A signal that aborts when either does; `dispose` stops listening to them. */
function eitherAborts(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const c = new AbortController();
  const abort = () => c.abort();
  if (a.aborted || b.aborted) abort();
  a.addEventListener("abort", abort, { once: true });
  b.addEventListener("abort", abort, { once: true });
  return {
    signal: c.signal,
    dispose: () => {
      a.removeEventListener("abort", abort);
      b.removeEventListener("abort", abort);
    },
  };
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
}

function causes(e: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur; i++) {
    out.push(cur);
    if (cur instanceof AggregateError && cur.errors.length > 0) out.push(...cur.errors);
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return out;
}

function networkCode(e: unknown): string | undefined {
  for (const c of causes(e)) {
    const code = (c as { code?: unknown } | null)?.code;
    if (typeof code === "string" && code) return code;
  }
  return undefined;
}

function networkMessage(e: unknown): string {
  const all = causes(e).filter((c): c is Error => c instanceof Error);
  // The innermost message is the informative one ("connect ECONNREFUSED 127.0.0.1:9").
  const inner = all.reverse().find((c) => c.message && c.message !== "fetch failed");
  return (inner ?? (e instanceof Error ? e : undefined))?.message ?? String(e);
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s` : `${ms}ms`;
}
