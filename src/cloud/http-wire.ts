// What crosses between the calling thread and the HTTP worker (./worker-http.ts, ./http-worker.ts):
// requests, cancellations and answers as plain data, and errors in a form structured clone keeps
// whole (it drops an Error's own properties such as `code`, which the transport reads).
import type { RawResponse } from "./http.js";

/** A request to send; `id` names it in the answer. */
export interface WireRequest {
  id: number;
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** Stop the request `id`: the caller has given up on it (its signal aborted). */
export interface WireCancel {
  id: number;
  cancel: true;
}

export type WireOut = WireRequest | WireCancel;

/** The answer to request `id`: a response or the error it failed with. */
export type WireAnswer = { id: number; response: RawResponse } | { id: number; error: WireError };

/** The worker's first message: it is ready for requests. */
export const WORKER_READY = "ready";

/** An error as data: its class, name, message, `code`, and its causes. */
export interface WireError {
  type: "Error" | "TypeError" | "RangeError" | "AggregateError";
  name: string;
  message: string;
  code?: string;
  cause?: WireError;
  errors?: WireError[];
}

/** How deep causes and aggregated errors are kept (the transport looks 4 deep). */
const MAX_DEPTH = 4;

export function errorToWire(e: unknown, depth = 0): WireError {
  if (!(e instanceof Error)) return { type: "Error", name: "Error", message: String(e) };
  const type =
    e instanceof AggregateError
      ? "AggregateError"
      : e instanceof TypeError
        ? "TypeError"
        : e instanceof RangeError
          ? "RangeError"
          : "Error";
  const out: WireError = { type, name: e.name, message: e.message };
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") out.code = code;
  if (depth < MAX_DEPTH) {
    if (e.cause !== undefined) out.cause = errorToWire(e.cause, depth + 1);
    if (e instanceof AggregateError)
      out.errors = (e.errors as unknown[]).slice(0, 8).map((x) => errorToWire(x, depth + 1));
  }
  return out;
}

export function errorFromWire(w: WireError): Error {
  const options = w.cause ? { cause: errorFromWire(w.cause) } : undefined;
  const e =
    w.type === "AggregateError"
      ? new AggregateError((w.errors ?? []).map(errorFromWire), w.message, options)
      : w.type === "TypeError"
        ? new TypeError(w.message, options)
        : w.type === "RangeError"
          ? new RangeError(w.message, options)
          : new Error(w.message, options);
  if (e.name !== w.name)
    Object.defineProperty(e, "name", { value: w.name, writable: true, configurable: true, enumerable: false });
  if (w.code !== undefined) Object.assign(e, { code: w.code });
  return e;
}
