import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { CloudError, canonicalFromHttp, parseErrorBody, redact } from "../../src/cloud/errors.js";
import { backoffDelay, parseRetryAfter } from "../../src/cloud/retry.js";
import type { AttemptEvent, CloudEvent } from "../../src/cloud/cloud-events.js";
import { fakeFetch, googleError, json, networkError, recordingSleep, type Reply } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const OK = json(200, { version: 1, bindings: [], etag: "ACAB" });

function setup(
  replies: Reply[] | ((n: number) => Reply),
  opts: { maxAttempts?: number; timeoutMs?: number; now?: () => number } = {},
) {
  const { delays, sleep } = recordingSleep();
  const events: CloudEvent[] = [];
  let n = 0;
  const f = Array.isArray(replies) ? fakeFetch(replies) : fakeFetch(() => replies(++n));
  const c = new CloudClient({
    endpoint: "http://127.0.0.1:1",
    env: {},
    fetch: f,
    retry: { sleep, random: () => 0.5, ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}) },
    onEvent: (e) => events.push(e),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  return { c, f, delays, events };
}

describe("error parsing", () => {
  it("parses Google's envelope", () => {
    const p = parseErrorBody(
      JSON.stringify({ error: { code: 404, message: "nope", status: "NOT_FOUND", details: [{ "@type": "x" }] } }),
    );
    expect(p).toEqual({ code: 404, message: "nope", status: "NOT_FOUND", details: [{ "@type": "x" }] });
  });

  it("tolerates non-JSON and HTML bodies", () => {
    expect(parseErrorBody("upstream connect error")).toEqual({ message: "upstream connect error", details: [] });
    expect(parseErrorBody("<html><head><title>502 Bad Gateway</title></head><body>…</body></html>").message).toBe(
      "502 Bad Gateway",
    );
    expect(parseErrorBody("")).toEqual({ details: [] });
    expect(parseErrorBody('{"error":"invalid_token","error_description":"expired"}').message).toBe(
      "invalid_token: expired",
    );
  });

  it("maps HTTP to canonical codes", () => {
    const m = {
      400: "INVALID_ARGUMENT",
      401: "UNAUTHENTICATED",
      403: "PERMISSION_DENIED",
      404: "NOT_FOUND",
      409: "ABORTED",
      429: "RESOURCE_EXHAUSTED",
      500: "INTERNAL",
      503: "UNAVAILABLE",
      504: "DEADLINE_EXCEEDED",
      418: "UNKNOWN",
    };
    for (const [h, s] of Object.entries(m)) expect(canonicalFromHttp(Number(h))).toBe(s);
  });

  it("builds a one-line message naming operation, resource, code and server message", async () => {
    const { c, f } = setup([
      googleError(404, "NOT_FOUND", `Resource "${RP}" was not found`, [
        { "@type": "type.googleapis.com/google.rpc.ResourceInfo" },
      ]),
    ]);
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(err).toBeInstanceOf(CloudError);
    expect(err.message).toBe(`getIamPolicy ${RP}: NOT_FOUND (404): Resource "${RP}" was not found`);
    expect(err).toMatchObject({
      status: "NOT_FOUND",
      httpStatus: 404,
      methodId: "gkebackup.projects.locations.restorePlans.getIamPolicy",
      resource: RP,
      attempts: 1,
      retryable: false,
    });
    expect(err.details).toHaveLength(1);
    expect(f.calls).toHaveLength(1);
  });

  it("uses the HTTP mapping when the body has no status, and a non-JSON body as message", async () => {
    const { c } = setup([{ status: 403, body: "Forbidden by proxy" }]);
    await expect(c.getIamPolicy("restorePlan", RP)).rejects.toMatchObject({
      status: "PERMISSION_DENIED",
      httpStatus: 403,
      message: `getIamPolicy ${RP}: PERMISSION_DENIED (403): Forbidden by proxy`,
    });
  });

  it("keeps ALREADY_EXISTS / FAILED_PRECONDITION from the body", async () => {
    const { c } = setup([googleError(400, "FAILED_PRECONDITION", "version 1 with conditions")]);
    await expect(c.setIamPolicy("restorePlan", RP, {})).rejects.toMatchObject({
      status: "FAILED_PRECONDITION",
      httpStatus: 400,
    });
  });

  it("redacts bearer values and OAuth tokens in arbitrary text", () => {
    expect(redact("Authorization: Bearer abc.def-ghi")).toBe("Authorization: Bearer [redacted]");
    expect(redact("token ya29.A0ARrdaM-xyz used")).toBe("token [redacted] used");
    expect(redact("my-secret here", ["my-secret"])).toBe("[redacted] here");
  });
});

describe("retries", () => {
  it("full jitter backoff: base 100 ms doubling, capped at 5 s", () => {
    const o = { baseDelayMs: 100, maxDelayMs: 5000 };
    expect([1, 2, 3, 4].map((r) => backoffDelay(r, { ...o, random: () => 0.5 }))).toEqual([50, 100, 200, 400]);
    expect(backoffDelay(20, { ...o, random: () => 0.999999 })).toBe(4999);
    expect(backoffDelay(3, { ...o, random: () => 0 })).toBe(0);
  });

  it("parses Retry-After seconds and HTTP dates", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter("0.25")).toBe(250);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Tue, 31 Dec 2024 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it("retries 503, 429 and 504 with backoff and succeeds", async () => {
    const { c, f, delays, events } = setup([
      googleError(503, "UNAVAILABLE", "down"),
      googleError(429, "RESOURCE_EXHAUSTED", "slow down"),
      googleError(504, undefined, "deadline"),
      OK,
    ]);
    const p = await c.getIamPolicy("restorePlan", RP);
    expect(p.etag).toBe("ACAB");
    expect(f.calls).toHaveLength(4);
    expect(delays).toEqual([50, 100, 200]);
    const attempts = events.filter((e): e is AttemptEvent => e.type === "attempt");
    expect(attempts.map((e) => [e.attempt, e.status, e.retry])).toEqual([
      [1, "UNAVAILABLE", true],
      [2, "RESOURCE_EXHAUSTED", true],
      [3, "DEADLINE_EXCEEDED", true],
      [4, "OK", false],
    ]);
    expect(
      attempts.every(
        (e) =>
          e.methodId === "gkebackup.projects.locations.restorePlans.getIamPolicy" && e.resource === RP && e.ms >= 0,
      ),
    ).toBe(true);
  });

  it("honours Retry-After in seconds and as an HTTP date", async () => {
    const now = Date.parse("2025-06-01T12:00:00Z");
    const { c, delays } = setup(
      [
        json(429, { error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } }, { "Retry-After": "2" }),
        json(503, { error: { code: 503, message: "busy" } }, { "Retry-After": new Date(now + 4000).toUTCString() }),
        OK,
      ],
      { now: () => now },
    );
    await c.getIamPolicy("restorePlan", RP);
    expect(delays).toEqual([2000, 4000]);
  });

  it("honours google.rpc.RetryInfo in error details", async () => {
    const { c, delays } = setup([
      googleError(503, "UNAVAILABLE", "busy", [
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1.5s" },
      ]),
      OK,
    ]);
    await c.getIamPolicy("restorePlan", RP);
    expect(delays).toEqual([1500]);
  });

  it.each([
    [400, "INVALID_ARGUMENT"],
    [401, "UNAUTHENTICATED"],
    [403, "PERMISSION_DENIED"],
    [404, "NOT_FOUND"],
    [409, "ABORTED"],
    [500, "INTERNAL"],
  ])("never retries %i %s", async (code, status) => {
    const { c, f, delays } = setup(() => googleError(code, status, "no"));
    await expect(c.setIamPolicy("endpoint", "projects/p/locations/us-central1/endpoints/e", {})).rejects.toMatchObject({
      status,
      httpStatus: code,
      attempts: 1,
      retryable: false,
    });
    expect(f.calls).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("gives up after maxAttempts with a message saying what was tried", async () => {
    const { c, f, delays } = setup(() => googleError(503, "UNAVAILABLE", "The service is currently unavailable."));
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(f.calls).toHaveLength(10);
    expect(delays).toHaveLength(9);
    expect(err).toBeInstanceOf(CloudError);
    expect(err).toMatchObject({ status: "UNAVAILABLE", httpStatus: 503, attempts: 10, retryable: true });
    expect(err.message).toMatch(
      new RegExp(
        `^getIamPolicy ${RP} failed after 10 attempts over \\d+\\.\\ds: UNAVAILABLE ` +
          `\\(503\\): The service is currently unavailable\\.$`,
      ),
    );
  });

  it("maxAttempts is configurable", async () => {
    const { c, f } = setup(() => googleError(503, "UNAVAILABLE", "x"), { maxAttempts: 2 });
    await expect(c.getIamPolicy("restorePlan", RP)).rejects.toThrow(/failed after 2 attempts/);
    expect(f.calls).toHaveLength(2);
  });

  it("retries connection resets and refusals (httpStatus 0), not unknown hosts", async () => {
    const { c, f } = setup([
      networkError("ECONNRESET"),
      networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"),
      OK,
    ]);
    await c.getIamPolicy("restorePlan", RP);
    expect(f.calls).toHaveLength(3);

    const bad = setup(() => networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"), { maxAttempts: 3 });
    const err = (await bad.c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(err).toMatchObject({ status: "UNAVAILABLE", httpStatus: 0, attempts: 3 });
    expect(err.message).toMatch(
      /failed after 3 attempts over .*: UNAVAILABLE: network error ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );

    const dns = setup(() => networkError("ENOTFOUND", "getaddrinfo ENOTFOUND nowhere"));
    await expect(dns.c.getIamPolicy("restorePlan", RP)).rejects.toMatchObject({ attempts: 1, retryable: false });
    expect(dns.f.calls).toHaveLength(1);
  });

  it("times out each attempt (DEADLINE_EXCEEDED, retried)", async () => {
    let n = 0;
    const hang = (signal: AbortSignal | undefined) =>
      new Promise<Reply>((_, reject) =>
        signal?.addEventListener("abort", () => reject(signal.reason as Error), { once: true }),
      );
    const { delays, sleep } = recordingSleep();
    const f = fakeFetch((_r, signal) => (++n === 1 ? hang(signal) : OK));
    const c = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: f, timeoutMs: 30, retry: { sleep } });
    const t0 = Date.now();
    await c.getIamPolicy("restorePlan", RP);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(f.calls).toHaveLength(2);
    expect(delays).toHaveLength(1);

    const f2 = fakeFetch((_r, signal) => hang(signal));
    const c2 = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: f2,
      timeoutMs: 20,
      retry: { sleep, maxAttempts: 2 },
    });
    const err = (await c2.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(err).toMatchObject({ status: "DEADLINE_EXCEEDED", httpStatus: 0, attempts: 2, retryable: true });
    expect(err.message).toMatch(
      /failed after 2 attempts .*DEADLINE_EXCEEDED: no complete response within 20ms \(per-attempt timeout\)/,
    );
  });

  it("a throwing event hook does not break calls", async () => {
    const f = fakeFetch([OK]);
    const c = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: f,
      onEvent: () => {
        throw new Error("boom");
      },
    });
    await expect(c.getIamPolicy("restorePlan", RP)).resolves.toMatchObject({ etag: "ACAB" });
  });

  it("a 200 with a non-JSON body is an error, not a crash", async () => {
    const { c } = setup([{ status: 200, body: "<html>captive portal</html>" }]);
    await expect(c.getIamPolicy("restorePlan", RP)).rejects.toThrow(/the response is not valid JSON/);
  });
});
