// Fault injection for API routes: latency, error rates and lost answers to committed writes,
// reproducible for a given PRNG seed so that retry behaviour can be tested and benchmarked
// deterministically.
import { ApiError, isCanonicalCode, type CanonicalCode } from "./errors.js";
import { METHOD_IDS, PROJECTS_GET } from "./routes.js";
import { ALL_KINDS, OBJECT_KINDS } from "../gcp/object-kinds.js";
import { Quotas, quotasProblem } from "./quotas.js";

/** The services a quota may name: those of the object kinds, and Cloud Resource Manager. */
const SERVICES: readonly string[] = [...new Set(ALL_KINDS.map((k) => OBJECT_KINDS[k].service)), PROJECTS_GET.service];

/** The write methods (setIamPolicy of every object kind): the ones whose answers can be lost. */
const WRITE_METHODS: readonly string[] = ALL_KINDS.flatMap((k) =>
  OBJECT_KINDS[k].methods.filter((m) => m.verb === "setIamPolicy").map((m) => m.id),
);

/** How a lost answer ends: an HTTP status with Google's error body, or a reset connection. */
export const LOST_KINDS = ["500", "503", "504", "reset"] as const;
export type LostKind = (typeof LOST_KINDS)[number];
const LOST_CODES: Record<Exclude<LostKind, "reset">, CanonicalCode> = {
  "500": "INTERNAL",
  "503": "UNAVAILABLE",
  "504": "DEADLINE_EXCEEDED",
};

/** Writes that are committed and then answered with an error, or not at all. */
export interface LostResponses {
  /** The share of successful writes whose answer is lost, 0 to 1. */
  rate: number;
  /** Picked uniformly for each lost answer. */
  kinds: LostKind[];
  /** Write method IDs it is limited to (default: every setIamPolicy). */
  methods?: string[];
}

export interface FaultConfig {
  latencyMs?: number;
  latencyJitterMs?: number;
  errorRates?: Partial<Record<CanonicalCode, number>>;
  retryAfterSeconds?: number;
  seed?: number;
  methods?: string[];
  /** Requests per minute per (service, project), e.g. {"gkebackup": 600} or
   *  {"cloudresourcemanager": 60}, and of its writes
   *  ("gkebackup.write"): over it, 429 RESOURCE_EXHAUSTED. */
  quotas?: Record<string, number>;
  /** Writes committed, then answered 500, 503 or 504, or with a reset connection. */
  lostResponses?: LostResponses;
}

/** mulberry32: tiny, fast and good enough to pick faults reproducibly. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MESSAGES: Partial<Record<CanonicalCode, string>> = {
  UNAVAILABLE: "The service is currently unavailable.",
  RESOURCE_EXHAUSTED: "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute'.",
  DEADLINE_EXCEEDED: "The request deadline was exceeded.",
  INTERNAL: "Internal error encountered.",
  ABORTED: "The operation was aborted.",
  PERMISSION_DENIED: "The caller does not have permission.",
  UNAUTHENTICATED: "Request had invalid authentication credentials.",
  NOT_FOUND: "Requested entity was not found.",
};

const REASONS: Partial<Record<CanonicalCode, string>> = {
  RESOURCE_EXHAUSTED: "RATE_LIMIT_EXCEEDED",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
};

/** Checks a fault configuration from the admin API; returns the problem or undefined. */
export function faultProblem(value: unknown): string | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return "expected a JSON object";
  const c = value as Record<string, unknown>;
  const known = [
    "latencyMs",
    "latencyJitterMs",
    "errorRates",
    "retryAfterSeconds",
    "seed",
    "methods",
    "quotas",
    "lostResponses",
  ];
  const unknown = unknownField(c, known);
  if (unknown) return unknown;
  for (const k of ["latencyMs", "latencyJitterMs", "retryAfterSeconds"]) {
    const v = c[k];
    if (v !== undefined && !(typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 600_000))
      return `${k} must be a number between 0 and 600000`;
  }
  if (c.seed !== undefined && !(typeof c.seed === "number" && Number.isInteger(c.seed)))
    return "seed must be an integer";
  if (c.errorRates !== undefined) {
    if (!c.errorRates || typeof c.errorRates !== "object" || Array.isArray(c.errorRates))
      return "errorRates must be an object {CANONICAL_CODE: rate}";
    let sum = 0;
    for (const [code, rate] of Object.entries(c.errorRates)) {
      if (!isCanonicalCode(code)) return `errorRates: "${code}" is not a canonical error code`;
      if (!(typeof rate === "number" && rate >= 0 && rate <= 1))
        return `errorRates.${code} must be a number between 0 and 1`;
      sum += rate;
    }
    if (sum > 1 + 1e-9) return `errorRates add up to ${sum}; the total must be at most 1`;
  }
  const quotas = quotasProblem(c.quotas, SERVICES);
  if (quotas) return quotas;
  return methodsProblem("methods", c.methods, METHOD_IDS, "unknown method ID") ?? lostResponsesProblem(c.lostResponses);
}

function unknownField(c: Record<string, unknown>, known: readonly string[], prefix = ""): string | undefined {
  const k = Object.keys(c).find((f) => !known.includes(f));
  return k === undefined ? undefined : `${prefix}unknown field "${k}" (expected ${known.join(", ")})`;
}

function methodsProblem(field: string, value: unknown, allowed: readonly string[], what: string): string | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return `${field} must be a list of method IDs`;
  const m: unknown = value.find((v) => !allowed.includes(v as string));
  return m === undefined ? undefined : `${field}: ${what} ${JSON.stringify(m)} (known: ${allowed.join(", ")})`;
}

function lostResponsesProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!value || typeof value !== "object" || Array.isArray(value))
    return `lostResponses must be an object {"rate": 0.3, "kinds": ["503", "reset"]}`;
  const l = value as Record<string, unknown>;
  const unknown = unknownField(l, ["rate", "kinds", "methods"], "lostResponses: ");
  if (unknown) return unknown;
  if (!(typeof l.rate === "number" && l.rate >= 0 && l.rate <= 1))
    return "lostResponses.rate must be a number between 0 and 1";
  const kinds = LOST_KINDS.map((k) => JSON.stringify(k)).join(", ");
  if (!Array.isArray(l.kinds) || l.kinds.length === 0)
    return `lostResponses.kinds must be a non-empty list of ${kinds}`;
  const bad: unknown = l.kinds.find((k) => !(LOST_KINDS as readonly unknown[]).includes(k));
  if (bad !== undefined) return `lostResponses.kinds: ${JSON.stringify(bad)} is not one of ${kinds}`;
  return methodsProblem("lostResponses.methods", l.methods, WRITE_METHODS, "unknown write method ID");
}

export interface FaultDecision {
  delayMs: number;
  error?: ApiError;
}

/** A committed write's answer, lost: `error` to answer instead, or none for a reset connection. */
export interface LostResponse {
  kind: LostKind;
  error?: ApiError;
}

export class Faults {
  private config: FaultConfig | undefined;
  private rates: [CanonicalCode, number][] = [];
  private random: () => number = Math.random;
  private quotas: Quotas | undefined;

  /** Sets a configuration already checked with faultProblem. */
  set(config: FaultConfig): void {
    this.config = config;
    this.quotas = config.quotas ? new Quotas(config.quotas) : undefined;
    this.rates = Object.entries(config.errorRates ?? {}).filter(([, r]) => (r ?? 0) > 0) as [CanonicalCode, number][];
    this.random = mulberry32(config.seed ?? 1);
  }

  clear(): void {
    this.config = undefined;
    this.quotas = undefined;
    this.rates = [];
  }

  current(): FaultConfig {
    return this.config ?? {};
  }

  /** Charges a request to its (service, project) quota: the 429 to answer when over it. */
  quota(service: string, project: string, write: boolean): ApiError | undefined {
    return this.quotas?.charge(service, project, write);
  }

  /** What happens to one request of `method`; draws from the PRNG in a fixed order. */
  decide(method: string): FaultDecision | undefined {
    const c = this.config;
    if (!c || !applies(c.methods, method)) return undefined;
    let delayMs = c.latencyMs ?? 0;
    if (c.latencyJitterMs) delayMs += this.random() * c.latencyJitterMs;
    if (this.rates.length === 0) return { delayMs };
    const r = this.random();
    let acc = 0;
    for (const [code, rate] of this.rates) {
      acc += rate;
      if (r < acc) return { delayMs, error: this.error(code) };
    }
    return { delayMs };
  }

  /** Whether the answer to `method`, a request that succeeded (and so committed its write), is
   *  lost; draws from the PRNG only for write methods the configuration names. */
  lose(method: string): LostResponse | undefined {
    const c = this.config;
    const l = c?.lostResponses;
    if (
      !l ||
      l.rate <= 0 ||
      !WRITE_METHODS.includes(method) ||
      !applies(c.methods, method) ||
      !applies(l.methods, method)
    )
      return undefined;
    if (this.random() >= l.rate) return undefined;
    const kind = l.kinds[Math.floor(this.random() * l.kinds.length)]!;
    return kind === "reset" ? { kind } : { kind, error: this.error(LOST_CODES[kind]) };
  }

  private error(code: CanonicalCode): ApiError {
    const c = this.config!;
    const retriable = code === "RESOURCE_EXHAUSTED" || code === "UNAVAILABLE";
    const headers: Record<string, string> = {};
    const details: Record<string, unknown>[] = [];
    if (retriable && c.retryAfterSeconds !== undefined) {
      headers["Retry-After"] = String(Math.ceil(c.retryAfterSeconds));
      details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${c.retryAfterSeconds}s` });
    }
    return new ApiError(code, MESSAGES[code] ?? `Injected ${code} fault.`, {
      reason: REASONS[code] ?? code,
      metadata: { emulatorFault: "true" },
      details,
      headers,
    });
  }
}

/** Whether a `methods` filter (none: every method) lets `method` through. */
function applies(methods: readonly string[] | undefined, method: string): boolean {
  return !methods || methods.includes(method);
}
