// The abort signal all the cloud calls of a plan or an apply wait on. Each call in flight adds
// listeners to it (its attempt's timeout, a retry's sleep), so at --parallelism 10 more than ten
// at once are the normal case, not a leak; past ten Node prints "MaxListenersExceededWarning:
// Possible EventTarget memory leak detected" (on the terminal, or in an automation caller's
// process). The engine's calls therefore share a signal of its own, without that limit, which
// follows the caller's: a caller's signal is never changed, and gets one listener.
import { setMaxListeners } from "node:events";

export interface SharedSignal {
  readonly signal: AbortSignal;
  /** Aborts the shared signal (and not the caller's). */
  abort(reason?: unknown): void;
  /** Stops following the caller's signal (call it when the operation is over). */
  dispose(): void;
}

export function sharedSignal(outer?: AbortSignal): SharedSignal {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const follow = () => controller.abort(outer?.reason);
  if (outer?.aborted) follow();
  else outer?.addEventListener("abort", follow, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose: () => outer?.removeEventListener("abort", follow),
  };
}
