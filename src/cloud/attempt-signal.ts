// The signal of one HTTP attempt: aborted by the attempt's timeout, or (for reads) by the call's
// own signal (Ctrl-C). Built for one attempt of thousands: one AbortController and one plain
// timer, where AbortSignal.timeout plus a combined signal cost two signals, a weak timer and four
// listeners on shared signals per attempt (≈ 100 ms of CPU for a 10,000-resource plan's reads).

/** The abort reason of a timed-out attempt: what AbortSignal.timeout gives. */
function timeoutReason(): DOMException {
  return new DOMException("The operation was aborted due to timeout", "TimeoutError");
}

export interface AttemptSignal {
  signal: AbortSignal;
  /** True once the attempt's timeout fired (whether or not it was also abandoned). */
  timedOut(): boolean;
  /** Stops the timer and the abandonment; call once the attempt settled. */
  dispose(): void;
}

/** The attempts in flight that each outer signal abandons, with one listener per outer signal. */
const ABANDONED_BY = new WeakMap<AbortSignal, Set<AbortController>>();

function attemptsOf(outer: AbortSignal): Set<AbortController> {
  let set = ABANDONED_BY.get(outer);
  if (!set) {
    const attempts = (set = new Set());
    ABANDONED_BY.set(outer, attempts);
    outer.addEventListener(
      "abort",
      () => {
        for (const c of attempts) c.abort();
        attempts.clear();
      },
      { once: true },
    );
  }
  return set;
}

/**
 * A signal that aborts after `ms` (reason: a TimeoutError, like AbortSignal.timeout) or when
 * `abandon` aborts (reason: an AbortError). Its timer never keeps the process alive.
 */
export function attemptSignal(ms: number, abandon?: AbortSignal): AttemptSignal {
  const c = new AbortController();
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    c.abort(timeoutReason());
  }, ms);
  timer.unref?.();
  let attempts: Set<AbortController> | undefined;
  if (abandon?.aborted) c.abort();
  else if (abandon) (attempts = attemptsOf(abandon)).add(c);
  return {
    signal: c.signal,
    timedOut: () => fired,
    dispose: () => {
      clearTimeout(timer);
      attempts?.delete(c);
    },
  };
}
