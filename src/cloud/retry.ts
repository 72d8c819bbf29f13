// Exponential backoff with full jitter, Retry-After parsing and the retry settings.

export interface RetryOptions {
  /** Total attempts, the first included. */
  maxAttempts: number;
  /** Backoff base: the ceiling of the first wait (ms). */
  baseDelayMs: number;
  /** Ceiling of any backoff wait (ms). */
  maxDelayMs: number;
  /** Longest server-requested wait (Retry-After, RetryInfo) we accept (ms); longer ones are capped. */
  maxRetryAfterMs: number;
  /** Uniform random number in [0, 1); injectable for deterministic tests. */
  random: () => number;
  /** Waits `ms` milliseconds (ending early when `signal` aborts); injectable so tests need not wait. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const DEFAULT_RETRY: RetryOptions = {
  // 10 attempts, full jitter, 5 s cap: about 10 s of waiting in the worst case; at a 25%
  // transient-error rate a call then fails once in a million, not once in four thousand.
  maxAttempts: 10,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
  sleep: defaultSleep,
};

export function retryOptions(partial?: Partial<RetryOptions>): RetryOptions {
  const o: RetryOptions = { ...DEFAULT_RETRY };
  if (partial)
    for (const [k, v] of Object.entries(partial)) if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  if (!Number.isInteger(o.maxAttempts) || o.maxAttempts < 1)
    throw new RangeError(`retry.maxAttempts must be an integer ≥ 1, got ${o.maxAttempts}`);
  if (!(o.baseDelayMs >= 0) || !(o.maxDelayMs >= 0)) throw new RangeError("retry delays must be ≥ 0");
  return o;
}

/** Waits `ms` milliseconds, or until `signal` aborts: its timer never outlives the abort (a
 *  pending timer would keep an interrupted process alive until it fires). */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** `sleep(ms, signal)`, ended at the abort even when `sleep` itself ignores the signal. */
export function waitUnlessAborted(
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (!signal) return sleep(ms);
  if (signal.aborted) return Promise.resolve();
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) =>
    signal.addEventListener("abort", (onAbort = () => resolve()), { once: true }),
  );
  return Promise.race([sleep(ms, signal), aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/**
 * Full jitter: a uniform wait in [0, min(cap, base·2^(retry-1))), where `retry` counts retries
 * from 1 (the wait before the second attempt is retry 1).
 */
export function backoffDelay(
  retry: number,
  o: { baseDelayMs: number; maxDelayMs: number; random: () => number },
): number {
  const exp = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(o.random() * exp);
}

/**
 * Parses a Retry-After header: delta seconds ("120", "1.5") or an HTTP date. Returns milliseconds
 * from `now`, never negative; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}
