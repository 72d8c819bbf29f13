// Errors from the cloud: Google's JSON error envelope, canonical codes and one-line messages.

/** Google's canonical codes (google.rpc.Code) plus "UNKNOWN" for anything we cannot classify. */
export type CanonicalCode =
  | "OK"
  | "CANCELLED"
  | "UNKNOWN"
  | "INVALID_ARGUMENT"
  | "DEADLINE_EXCEEDED"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "PERMISSION_DENIED"
  | "RESOURCE_EXHAUSTED"
  | "FAILED_PRECONDITION"
  | "ABORTED"
  | "OUT_OF_RANGE"
  | "UNIMPLEMENTED"
  | "INTERNAL"
  | "UNAVAILABLE"
  | "DATA_LOSS"
  | "UNAUTHENTICATED";

/** Canonical codes the transport retries with backoff. ABORTED is retried by the policy engine. */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set(["UNAVAILABLE", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"]);

const HTTP_TO_CANONICAL: Record<number, CanonicalCode> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  412: "FAILED_PRECONDITION",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Google's HTTP → canonical mapping, used when an error body carries no `status`. */
export function canonicalFromHttp(httpStatus: number): CanonicalCode {
  return HTTP_TO_CANONICAL[httpStatus] ?? "UNKNOWN";
}

export interface CloudErrorInit {
  /** Canonical code ("NOT_FOUND", "ABORTED", …) or "UNKNOWN". */
  status: string;
  /** HTTP status; 0 when no response was received (network failure, timeout, local validation). */
  httpStatus: number;
  /** Discovery method id, e.g. gkebackup.projects.locations.restorePlans.getIamPolicy. */
  methodId: string;
  /** Full resource name. */
  resource: string;
  /** Short operation name used in the message (getIamPolicy, setIamPolicy, getFederation…). */
  operation?: string;
  /** The server's (or the network layer's) message, without the prefix. */
  serverMessage: string;
  attempts?: number;
  /** Total time spent on the call, all attempts and waits included (ms). */
  elapsedMs?: number;
  retryable?: boolean;
  details?: unknown[];
  /** Free text replacing the default "failed after N attempts over Xs" part. */
  summary?: string;
  /** Why the call stopped retrying, when it was not for want of attempts: "(call timeout 2s)". */
  note?: string;
  cause?: unknown;
  /** An attempt of this call was sent and may have taken effect: no answer said it did not (see
   *  outcomeUnknown in ./reachability.ts). A write that fails so may have landed. */
  uncertain?: boolean;
}

/** An error from a cloud call: what was called, on what, how often, and what the server said. */
export class CloudError extends Error {
  override readonly name = "CloudError";
  readonly status: string;
  readonly httpStatus: number;
  readonly methodId: string;
  readonly resource: string;
  readonly operation: string;
  readonly serverMessage: string;
  readonly attempts: number;
  readonly elapsedMs: number;
  readonly retryable: boolean;
  readonly details: unknown[];
  readonly note: string | undefined;
  readonly uncertain: boolean;

  constructor(init: CloudErrorInit) {
    const operation = init.operation ?? operationOf(init.methodId);
    const attempts = init.attempts ?? 1;
    const elapsedMs = init.elapsedMs ?? 0;
    super(
      formatMessage({ ...init, operation, attempts, elapsedMs }),
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.httpStatus = init.httpStatus;
    this.methodId = init.methodId;
    this.resource = init.resource;
    this.operation = operation;
    this.serverMessage = init.serverMessage;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
    this.retryable = init.retryable ?? RETRYABLE_CODES.has(init.status);
    this.details = init.details ?? [];
    this.note = init.note;
    this.uncertain = init.uncertain === true;
  }

  /** A copy of this error that records how many attempts were made in total (and, with `note`, why no more). */
  withAttempts(attempts: number, elapsedMs: number, note?: string, uncertain = this.uncertain): CloudError {
    return new CloudError({
      status: this.status,
      httpStatus: this.httpStatus,
      methodId: this.methodId,
      resource: this.resource,
      operation: this.operation,
      serverMessage: this.serverMessage,
      attempts,
      elapsedMs,
      retryable: this.retryable,
      details: this.details,
      cause: this.cause,
      ...(note !== undefined ? { note } : {}),
      ...(uncertain ? { uncertain } : {}),
    });
  }
}

/**
 * The error of a call that was interrupted (its AbortSignal aborted, e.g. by Ctrl-C) before it was
 * sent, or before it was sent again: CANCELLED, never retried. A write that fails so made no change.
 */
export function interruptedError(
  call: { methodId: string; resource: string; operation?: string; signal?: AbortSignal },
  what = "not sent",
  cause?: unknown,
  uncertain = false,
): CloudError {
  return new CloudError({
    status: "CANCELLED",
    httpStatus: 0,
    methodId: call.methodId,
    resource: call.resource,
    ...(call.operation ? { operation: call.operation } : {}),
    serverMessage: `${stoppedBy(call.signal)}: ${what}`,
    retryable: false,
    ...(cause !== undefined ? { cause } : {}),
    ...(uncertain ? { uncertain } : {}),
  });
}

/** Whether `err` is a call never sent because no access token could be had (./transport.ts:
 *  UNAUTHENTICATED with no HTTP status): it says nothing about the object, and the same for every call. */
export function noAccessToken(err: unknown): boolean {
  const c = err as { status?: unknown; httpStatus?: unknown } | undefined;
  return c?.status === "UNAUTHENTICATED" && c.httpStatus === 0;
}

/** "interrupted" (Ctrl-C), or what a time limit that aborted `signal` says of itself. */
export function stoppedBy(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === "TimeoutError" && reason.message) return `stopped: ${reason.message}`;
  return "interrupted";
}

export function isCloudError(e: unknown, status?: string): e is CloudError {
  return e instanceof CloudError && (status === undefined || e.status === status);
}

function operationOf(methodId: string): string {
  const dot = methodId.lastIndexOf(".");
  return dot < 0 ? methodId : methodId.slice(dot + 1);
}

function formatMessage(init: CloudErrorInit & { operation: string; attempts: number; elapsedMs: number }): string {
  const head = init.resource ? `${init.operation} ${init.resource}` : init.operation;
  let what = init.status;
  if (init.httpStatus > 0) what += ` (${init.httpStatus})`;
  const msg = oneLine(init.serverMessage);
  const tail = msg ? `${what}: ${msg}` : what;
  if (init.summary) return `${head} ${init.summary}: ${tail}`;
  if (init.attempts > 1 || init.note) {
    const note = init.note ? ` (${init.note})` : "";
    return (
      `${head} failed after ${init.attempts} ${init.attempts === 1 ? "attempt" : "attempts"} ` +
      `over ${(init.elapsedMs / 1000).toFixed(1)}s${note}: ${tail}`
    );
  }
  return `${head}: ${tail}`;
}

function oneLine(text: string): string {
  const s = text.replace(/\s+/g, " ").trim();
  return s.length > 500 ? `${s.slice(0, 497)}...` : s;
}

/** The fields of Google's error envelope; every one may be missing. */
export interface ParsedErrorBody {
  code?: number;
  message?: string;
  status?: string;
  details: unknown[];
}

/**
 * Parses `{"error":{"code","message","status","details"}}`. Tolerates non-JSON bodies (HTML from a
 * proxy, plain text): the text becomes the message.
 */
export function parseErrorBody(body: string): ParsedErrorBody {
  const text = body.trim();
  if (text === "") return { details: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: stripHtml(text), details: [] };
  }
  // Some front ends return an array of envelopes.
  if (Array.isArray(parsed)) parsed = parsed[0];
  const err = isObject(parsed) ? parsed.error : undefined;
  if (isObject(err)) {
    const out: ParsedErrorBody = { details: Array.isArray(err.details) ? err.details : [] };
    if (typeof err.code === "number") out.code = err.code;
    if (typeof err.message === "string") out.message = err.message;
    if (typeof err.status === "string" && /^[A-Z_]+$/.test(err.status)) out.status = err.status;
    return out;
  }
  // OAuth-style errors: {"error": "invalid_token", "error_description": "..."}
  if (isObject(parsed) && typeof parsed.error === "string") {
    const desc = typeof parsed.error_description === "string" ? `: ${parsed.error_description}` : "";
    return { message: `${parsed.error}${desc}`, details: [] };
  }
  return { message: text, details: [] };
}

function stripHtml(text: string): string {
  if (!/^<(!doctype|html)/i.test(text)) return text;
  const title = /<title>([^<]*)<\/title>/i.exec(text);
  return (title?.[1] ?? text.replace(/<[^>]+>/g, " ")).trim();
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Google's RetryInfo detail (`retryDelay: "1.5s"`) in milliseconds, if present. */
export function retryDelayFromDetails(details: readonly unknown[]): number | undefined {
  for (const d of details) {
    if (!isObject(d)) continue;
    const type = d["@type"];
    if (typeof type === "string" && type.endsWith("google.rpc.RetryInfo") && typeof d.retryDelay === "string") {
      const m = /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay);
      if (m) return Math.round(Number(m[1]) * 1000);
    }
  }
  return undefined;
}

/** A slice of a secret this long or longer is redacted wherever it appears (a server may echo the
 *  first characters of a token, or a log line a part of it); shorter secrets only whole. */
const MIN_SECRET_SLICE = 8;
/** Secrets shorter than this are not looked for at all (they would match ordinary words). */
const MIN_SECRET = 4;

/** The spans [start, end) of `text` that are `secret` whole. */
function wholeSpans(text: string, secret: string, spans: [number, number][]): void {
  for (let i = text.indexOf(secret); i >= 0; i = text.indexOf(secret, i + 1)) spans.push([i, i + secret.length]);
}

/** The spans of `text` that are slices of one of `secrets` of MIN_SECRET_SLICE characters or more,
 *  each as long as it goes: found by the slice's first MIN_SECRET_SLICE characters (one lookup per
 *  position of the text, whatever the number of secrets), then extended. */
function sliceSpans(text: string, secrets: readonly string[], spans: [number, number][]): void {
  const starts = new Map<string, string[]>();
  for (const secret of secrets) {
    for (let i = 0; i + MIN_SECRET_SLICE <= secret.length; i++) {
      const start = secret.slice(i, i + MIN_SECRET_SLICE);
      const list = starts.get(start);
      if (!list) starts.set(start, [secret]);
      else if (list[list.length - 1] !== secret) list.push(secret);
    }
  }
  if (starts.size === 0) return;
  let covered = 0;
  for (let i = 0; i + MIN_SECRET_SLICE <= text.length; i++) {
    const candidates = starts.get(text.slice(i, i + MIN_SECRET_SLICE));
    if (!candidates) continue;
    for (const secret of candidates) {
      // Inside a span already found, a slice starting here matters only if it reaches beyond it.
      let end = Math.max(i + MIN_SECRET_SLICE, covered);
      if (end > i + MIN_SECRET_SLICE && !secret.includes(text.slice(i, end))) continue;
      while (end < text.length && secret.includes(text.slice(i, end + 1))) end++;
      if (end > covered) spans.push([i, (covered = end)]);
    }
  }
}

/** `text` with the spans (merged where they overlap or touch) replaced by "[redacted]". */
function withoutSpans(text: string, spans: [number, number][]): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (let i = 0; i < spans.length;) {
    const start = spans[i]![0];
    let end = spans[i]![1];
    for (i++; i < spans.length && spans[i]![0] <= end; i++) end = Math.max(end, spans[i]![1]);
    out += `${text.slice(at, start)}[redacted]`;
    at = end;
  }
  return out + text.slice(at);
}

/**
 * Removes credentials from text that may end up in a message: the given secrets, and any slice of
 * 8 characters or more of them; `Bearer …` and `Basic …` values (an echoed Authorization or
 * Proxy-Authorization header), the user:password of URLs and Google OAuth access tokens (`ya29.…`).
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  const spans: [number, number][] = [];
  const unique = [...new Set(secrets)];
  sliceSpans(
    text,
    unique.filter((s) => s.length >= MIN_SECRET_SLICE),
    spans,
  );
  for (const s of unique) if (s.length >= MIN_SECRET && s.length < MIN_SECRET_SLICE) wholeSpans(text, s, spans);
  return withoutSpans(text, spans)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 [redacted]")
    .replace(/\bya29\.[A-Za-z0-9._-]+/g, "[redacted]")
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1[redacted]@");
}

/** `value` (JSON data: an error's details) with every string in it passed through redact. */
export function redactDeep(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === "string") return redact(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, redact(k, secrets), {
      value: redactDeep(v, secrets),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/**
 * The credentials in a URL's user:password, in every form a server may echo them: raw, decoded,
 * "user:password" and its base64 (a Basic header). Empty when the URL has none or is unreadable.
 */
export function userinfoSecrets(url: string | undefined): string[] {
  if (!url) return [];
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*)@/i.exec(url.trim()) ?? /^([^/?#@:]*:[^/?#@]*)@/.exec(url.trim());
  if (!m) return [];
  const info = m[1]!;
  const colon = info.indexOf(":");
  const user = colon < 0 ? info : info.slice(0, colon);
  const password = colon < 0 ? "" : info.slice(colon + 1);
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const plain = `${decode(user)}:${decode(password)}`;
  const out = new Set([info, plain, Buffer.from(plain).toString("base64")]);
  if (password) out.add(password).add(decode(password));
  else out.add(user).add(decode(user));
  return [...out].filter((s) => s.length >= 4);
}
