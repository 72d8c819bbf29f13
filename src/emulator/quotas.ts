// Request quotas as Google enforces them: `quotas: {"<service>": requestsPerMinute}` in the fault
// configuration limits each (service, project) to that many requests a minute, and
// `"<service>.write"` its setIamPolicy calls (as Cloud IAM has a write quota besides reads). A request over it
// gets 429 RESOURCE_EXHAUSTED with Retry-After and RetryInfo (the wait until one is allowed again)
// and an ErrorInfo naming the quota, as Google's front end answers. The emulator's own rules: it
// shares only the neutral object-kind table with the client.
import { ApiError } from "./errors.js";

/** The quota's window: a bucket holds one second's worth of requests (at least one), so that a
 *  quota of N a minute is enforced over seconds, not only over a whole minute. */
const WINDOW_MS = 1_000;

/** Checks `quotas` of a fault configuration; the problem or undefined. */
export function quotasProblem(value: unknown, services: readonly string[]): string | undefined {
  if (value === undefined) return undefined;
  if (!value || typeof value !== "object" || Array.isArray(value))
    return "quotas must be an object {service: requestsPerMinute}";
  for (const [key, rate] of Object.entries(value)) {
    const service = key.endsWith(".write") ? key.slice(0, -".write".length) : key;
    if (!services.includes(service)) return `quotas: unknown service "${service}" (known: ${services.join(", ")})`;
    if (!(typeof rate === "number" && Number.isFinite(rate) && rate >= 1 && rate <= 1_000_000))
      return `quotas.${key} must be a number of requests per minute between 1 and 1000000`;
  }
  return undefined;
}

interface Bucket {
  tokens: number;
  last: number;
}

export class Quotas {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: Readonly<Record<string, number>>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Charges one request of `service` on `project` (a write to the write quota too); the 429
   *  to answer when over a quota. */
  charge(service: string, project: string, write = false): ApiError | undefined {
    return this.chargeOne(service, project) ?? (write ? this.chargeOne(`${service}.write`, project) : undefined);
  }

  private chargeOne(service: string, project: string): ApiError | undefined {
    const limit = this.limits[service];
    if (limit === undefined) return undefined;
    const perMs = limit / 60_000;
    const capacity = Math.max(1, perMs * WINDOW_MS);
    const key = `${service} ${project}`;
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: capacity, last: now };
    b.tokens = Math.min(capacity, b.tokens + (now - b.last) * perMs);
    b.last = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    const retryAfterS = Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    return exhausted(service, project, limit, retryAfterS);
  }
}

function exhausted(service: string, project: string, limit: number, retryAfterS: number): ApiError {
  const host = `${service.replace(/\.write$/, "")}.googleapis.com`;
  return new ApiError(
    "RESOURCE_EXHAUSTED",
    `Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of ` +
      `service '${host}' for consumer 'project_number:${project}'.`,
    {
      reason: "RATE_LIMIT_EXCEEDED",
      metadata: {
        service: host,
        consumer: `projects/${project}`,
        quota_metric: `${host}/requests`,
        quota_limit: service.endsWith(".write") ? "WriteRequestsPerMinutePerProject" : "RequestsPerMinutePerProject",
        quota_limit_value: String(limit),
      },
      details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${retryAfterS}s` }],
      headers: { "Retry-After": String(retryAfterS) },
    },
  );
}
