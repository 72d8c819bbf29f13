// A call's turn at its rate: it takes a token from each of its buckets (./rate-limit.ts) before
// an attempt, and tells them how the attempt went, so a quota refusal slows them down.
import type { AdaptiveBucket } from "./rate-limit.js";
import type { Outcome } from "./attempt-outcome.js";

/** Takes a token from each of the call's buckets; a promise only when one has to be waited for
 *  (most calls are not paced: they cost no promise). */
export function takeTokens(
  buckets: readonly AdaptiveBucket[],
  signal: AbortSignal | undefined,
  retrying: boolean,
): Promise<void> | undefined {
  for (let i = 0; i < buckets.length; i++) {
    if (!signal?.aborted && buckets[i]!.tryTake(retrying) === 0) continue;
    return waitForTokens(buckets.slice(i), signal, retrying);
  }
  return undefined;
}

async function waitForTokens(
  buckets: readonly AdaptiveBucket[],
  signal: AbortSignal | undefined,
  retrying: boolean,
): Promise<void> {
  for (const b of buckets) await b.take(signal, retrying);
}

/** Tells the call's buckets how the attempt went: a quota refusal slows them, a success lets them recover. */
export function paced(buckets: readonly AdaptiveBucket[], outcome: Outcome): void {
  if (outcome.ok) for (const b of buckets) b.succeeded();
  else if (outcome.error.status === "RESOURCE_EXHAUSTED" || outcome.error.httpStatus === 429)
    for (const b of buckets) b.throttled(outcome.retryAfterMs);
}
