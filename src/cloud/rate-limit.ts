// Quota-aware pacing: one adaptive token bucket per (service, project), so that a large apply
// runs at a project's request quota instead of bouncing off it (issue 20). A call takes a token
// before each attempt; a RESOURCE_EXHAUSTED (429) cuts the bucket's rate by 30% and pauses it for the
// Retry-After; each success then adds back a small step, up to the configured rate.
//
// A small token bucket of our own rather than `bottleneck` or `p-throttle`: bottleneck has had no
// release since 2019 and its reservoir API has no notion of a rate that adapts to 429s;
// p-throttle's rate is fixed at creation. What we need is ~100 lines with an injectable clock, so
// the tests drive it without waiting.
import type { Service } from "./endpoint.js";

/** Requests per minute, by service; `{service}.write` limits the service's setIamPolicy calls too. */
export type RateTable = Readonly<Record<string, number>>;

/**
 * Defaults when the endpoint is Google (per project, per minute). Cloud IAM publishes 6,000 read
 * and 600 write requests per project per minute for allow policies (getIamPolicy / setIamPolicy:
 * https://cloud.google.com/iam/quotas). Backup for GKE, Vertex AI and Dataproc Metastore publish
 * no separate request quota for their IAM methods that we could find, so we take IAM's numbers as
 * the conservative default for each: 6,000 requests per minute in all, of which at most 600
 * setIamPolicy writes. Emulators get no default: they are unlimited unless they answer 429, and
 * then the adaptive back-off applies all the same.
 */
export const GOOGLE_DEFAULT_RATES: RateTable = {
  gkebackup: 6_000,
  "gkebackup.write": 600,
  aiplatform: 6_000,
  "aiplatform.write": 600,
  metastore: 6_000,
};

/** A refusal multiplies the rate by this (AWS's adaptive retry mode uses the same 0.7, CUBIC's
 *  β); each success adds this share of the rate before the first refusal back. At 0.5 and 2%,
 *  random 429s (5% of calls, unrelated to any rate) cut a 500-resource apply's speed by 3. */
const BACKOFF = 0.7;
const RECOVERY = 0.05;
/** Refusals among the last 20 attempts that make an unlimited bucket slow down. */
const REFUSALS_OF_AN_UNKNOWN_QUOTA = 4;

/** The slowest an adaptive back-off goes (requests per minute). */
export const MIN_RATE_PER_MINUTE = 6;

export interface LimiterClock {
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** One adaptive token bucket. Rates are per minute; the bucket holds one second's worth (≥ 1). */
export class AdaptiveBucket {
  /** The configured ceiling (Infinity: unlimited). */
  readonly ceiling: number;
  private rate: number;
  private tokens: number;
  private last: number;
  private pausedUntil = 0;
  /** Until then, another refusal does not slow the bucket again. */
  private settledAt = -Infinity;
  /** The step of recovery is 5% of this: the ceiling, or for an unlimited bucket the rate it
   *  was sending at when first throttled. */
  private target: number;
  /** Recent grant times, to measure the rate an unlimited bucket was sending at. */
  private readonly recent: number[] = [];
  /** Whether each of the last 20 attempts was refused. */
  private readonly outcomes: boolean[] = [];
  throttles = 0;

  constructor(
    perMinute: number,
    private readonly clock: LimiterClock,
  ) {
    if (!(perMinute > 0)) throw new RangeError(`rate must be > 0 per minute, got ${perMinute}`);
    this.ceiling = perMinute;
    this.rate = perMinute;
    this.target = perMinute;
    this.last = clock.now();
    this.tokens = this.capacity();
  }

  /** The current rate (requests per minute). */
  get perMinute(): number {
    return this.rate;
  }

  private capacity(): number {
    return Math.max(1, this.rate / 60);
  }

  private refill(now: number): void {
    if (this.rate === Infinity) this.tokens = Infinity;
    else this.tokens = Math.min(this.capacity(), this.tokens + ((now - this.last) * this.rate) / 60_000);
    this.last = now;
  }

  /** Takes a token now and returns 0, or returns how long to wait before asking again. */
  tryTake(retrying = false): number {
    const now = this.clock.now();
    this.refill(now);
    if (now < this.pausedUntil && !retrying) return this.pausedUntil - now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.recent.push(now);
      if (this.recent.length > 64) this.recent.shift();
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.tokens) * 60_000) / this.rate));
  }

  /** Waits for a token; returns early (without one) once `signal` aborts. `retrying`: the retry
   *  of a throttled call, which has waited the Retry-After itself. */
  async take(signal?: AbortSignal, retrying = false): Promise<void> {
    for (;;) {
      if (signal?.aborted) return;
      const wait = this.tryTake(retrying);
      if (wait === 0) return;
      await this.clock.sleep(wait, signal);
    }
  }

  /** The rate we were sending at, measured over the recent grants (requests per minute);
   *  Infinity when too few grants of the last minute say anything about it. */
  private measured(now: number): number {
    const recent = this.recent.filter((t) => now - t < 60_000);
    if (recent.length < 8) return Infinity;
    return (recent.length * 60_000) / Math.max(1_000, now - recent[0]!);
  }

  private outcome(refused: boolean): void {
    this.outcomes.push(refused);
    if (this.outcomes.length > 20) this.outcomes.shift();
  }

  /** A 429 RESOURCE_EXHAUSTED: slow down (BACKOFF), empty the bucket, pause for the Retry-After. */
  throttled(retryAfterMs?: number): void {
    const now = this.clock.now();
    this.refill(now);
    this.throttles++;
    if (retryAfterMs !== undefined && retryAfterMs > 0)
      this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
    // The refusals of one burst are one signal: back off once, then again only a second (or a
    // Retry-After) later, or ten refusals in flight would cut the rate a thousandfold.
    this.outcome(true);
    if (now < this.settledAt) return;
    // An unlimited bucket takes a few refusals among its recent calls as a quota, not one: random
    // 429s of an overloaded server are retried without slowing everything down.
    if (this.ceiling === Infinity && this.outcomes.filter(Boolean).length < REFUSALS_OF_AN_UNKNOWN_QUOTA) return;
    this.settledAt = now + Math.max(1_000, retryAfterMs ?? 0);
    // An unlimited bucket backs off from the rate it was actually sending at.
    const from = this.ceiling === Infinity ? Math.min(this.rate, this.measured(now)) : this.rate;
    if (this.target === Infinity) this.target = from;
    if (from !== Infinity) {
      this.rate = Math.max(MIN_RATE_PER_MINUTE, from * BACKOFF);
      this.tokens = 0;
    }
  }

  /** A success: recover gradually, by 5% of the rate before the first throttle per success, up
   *  to the ceiling (an unlimited bucket keeps probing upward the same way). */
  succeeded(): void {
    this.outcome(false);
    if (this.rate >= this.ceiling) return;
    this.refill(this.clock.now());
    this.rate = Math.min(this.ceiling, this.rate + this.target * RECOVERY);
  }
}

/** The buckets of one client: created on first use, per (rate key, project). */
export class RateLimiter {
  private readonly buckets = new Map<string, AdaptiveBucket>();
  /** bucketsFor's answers: the buckets of a (service, project, write) never change. */
  private readonly lists = new Map<string, readonly AdaptiveBucket[]>();

  constructor(
    private readonly rates: RateTable,
    private readonly clock: LimiterClock,
  ) {}

  /** The buckets a call of `service` on `project` takes from: the service's, and its writes'. */
  bucketsFor(service: Service, project: string, write: boolean): readonly AdaptiveBucket[] {
    const id = `${write ? "w" : "r"} ${service} ${project}`;
    let list = this.lists.get(id);
    if (!list) this.lists.set(id, (list = this.bucketList(service, project, write)));
    return list;
  }

  private bucketList(service: Service, project: string, write: boolean): AdaptiveBucket[] {
    const keys = write ? [service, `${service}.write`] : [service];
    return keys.filter((k) => k === service || this.rates[k] !== undefined).map((k) => this.bucket(k, project));
  }

  private bucket(key: string, project: string): AdaptiveBucket {
    const id = `${key} ${project}`;
    let b = this.buckets.get(id);
    if (!b) this.buckets.set(id, (b = new AdaptiveBucket(this.rates[key] ?? Infinity, this.clock)));
    return b;
  }
}

/** Parses `service=N/min` (also `N/s`, `N/h`, or a bare N per minute) into a rate table entry. */
export function parseRate(text: string, services: readonly string[]): { key: string; perMinute: number } | string {
  const m = /^\s*([a-z]+)(\.write)?\s*=\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(s|sec|min|m|h|hour))?\s*$/.exec(text);
  if (!m) return `--rate "${text}" is not service=N/min (e.g. gkebackup=600/min)`;
  const [, service, write, n, unit] = m as unknown as [string, string, string | undefined, string, string | undefined];
  if (!services.includes(service))
    return `--rate "${text}": unknown service "${service}" (known: ${services.join(", ")})`;
  const perUnit = Number(n);
  const perMinute =
    unit === "s" || unit === "sec" ? perUnit * 60 : unit === "h" || unit === "hour" ? perUnit / 60 : perUnit;
  if (!(perMinute >= 1)) return `--rate "${text}": the rate must be at least 1/min`;
  return { key: service + (write ?? ""), perMinute };
}
