// `drift --watch`: the check again and again, each drift reported once. The next check starts an
// interval (with jitter, so that many watchers spread their reads) after the previous one ended, so
// checks never overlap and each paces its own reads within --rate. The clock and the jitter's random
// source are injected: tests run the loop without waiting.
import { type DriftFinding, findingKey } from "../plan/drift.js";
import type { DriftReport } from "./drift.js";

/** What the loop waits with. `sleep` resolves after `ms`, or at once when `wake` is called (a
 *  "check now" request), or when `signal` aborts. */
export interface WatchClock {
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface WatchOptions {
  intervalMs: number;
  /** The interval varies by up to this fraction either way (default 0.1). */
  jitter?: number;
  /** In [0, 1) (default Math.random). */
  random?: () => number;
  clock: WatchClock;
  /** Stops the loop (after the check in progress). */
  signal?: AbortSignal;
  /** Stop after this many checks (default: never). */
  checks?: number;
}

/** One check as the loop saw it. */
export interface WatchedCheck {
  /** 1, 2, … */
  n: number;
  at: Date;
  report: DriftReport;
  /** Findings not reported before (or that changed since). */
  fresh: DriftFinding[];
  /** Findings reported before that are gone now. */
  cleared: DriftFinding[];
  /** Findings reported before that are still there (not reported again). */
  ongoing: number;
  /** How long until the next check (ms). */
  nextInMs: number;
}

/** The wait before the next check: the interval, moved by up to `jitter` of it either way. */
export function jittered(intervalMs: number, jitter: number, random: () => number): number {
  return Math.max(0, Math.round(intervalMs * (1 + jitter * (2 * random() - 1))));
}

/** Runs `check` until `signal` aborts (or `checks` ran), handing each to `seen`. A failed check
 *  (errored report) reports nothing new and forgets nothing: the next one compares with the last good. */
export async function watchDrift(
  check: () => Promise<DriftReport | undefined>,
  seen: (c: WatchedCheck) => Promise<void>,
  o: WatchOptions,
): Promise<void> {
  let reported = new Map<string, DriftFinding>();
  for (let n = 1; !o.signal?.aborted; n++) {
    const report = await check();
    if (!report) return;
    const at = o.clock.now();
    const nextInMs = jittered(o.intervalMs, o.jitter ?? 0.1, o.random ?? Math.random);
    if (report.errored) await seen({ n, at, report, fresh: [], cleared: [], ongoing: reported.size, nextInMs });
    else {
      const now = new Map(report.findings.map((f) => [findingKey(f), f] as const));
      const fresh = [...now].filter(([k]) => !reported.has(k)).map(([, f]) => f);
      const cleared = [...reported].filter(([k]) => !now.has(k)).map(([, f]) => f);
      await seen({ n, at, report, fresh, cleared, ongoing: now.size - fresh.length, nextInMs });
      reported = now;
    }
    if (o.checks !== undefined && n >= o.checks) return;
    await o.clock.sleep(nextInMs, o.signal);
  }
}

/** The process's clock; `wake()` ends the current sleep at once (SIGUSR1: check now), or the next
 *  one when no sleep is under way (a request during a check is not lost). */
export function systemClock(): WatchClock & { wake(): void } {
  let wakeUp: (() => void) | undefined;
  let woken = false;
  return {
    now: () => new Date(),
    sleep(ms, signal) {
      if (woken || signal?.aborted) {
        woken = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          wakeUp = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
        wakeUp = done;
      });
    },
    wake() {
      if (wakeUp) wakeUp();
      else woken = true;
    },
  };
}
