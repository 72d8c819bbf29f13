// What a failed HTTP attempt was: Node's network error codes worth another try, the informative
// message buried in an error's causes, and the small signal and time helpers of the transport.
import { pushAll } from "../base/arrays.js";

/** Error codes of connection-level failures worth another try. */
export const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
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
  // A proxy's gateway error on CONNECT (its upstream failed): see ./http.ts proxyRefused.
  "EPROXYGATEWAY",
]);

/** `p`, or a rejection with the signal's reason as soon as it aborts (`p` is left to settle). */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e as Error);
      },
    );
  });
}

export function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
}

function causes(e: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur; i++) {
    out.push(cur);
    if (cur instanceof AggregateError && cur.errors.length > 0) pushAll(out, cur.errors);
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return out;
}

export function networkCode(e: unknown): string | undefined {
  for (const c of causes(e)) {
    const code = (c as { code?: unknown } | null)?.code;
    if (typeof code === "string" && code) return code;
  }
  return undefined;
}

export function networkMessage(e: unknown): string {
  const all = causes(e).filter((c): c is Error => c instanceof Error);
  // The innermost message is the informative one ("connect ECONNREFUSED 127.0.0.1:9").
  const inner = all.reverse().find((c) => c.message && c.message !== "fetch failed");
  return (inner ?? (e instanceof Error ? e : undefined))?.message ?? String(e);
}

/** 2s, 1.5s, 3600s, 250ms. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s` : `${Math.round(ms)}ms`;
}
