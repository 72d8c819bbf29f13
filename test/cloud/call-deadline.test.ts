// Issue 12: every call has a total deadline across its retries; Retry-After is honoured up to 60 s
// and never past the deadline; 500 INTERNAL is retried where a repeat is safe. A fake clock that
// the fake sleep advances: no test waits for real, except where a real timer is the point.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import type { CloudError } from "../../src/cloud/errors.js";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import type { AttemptEvent, CloudEvent } from "../../src/cloud/cloud-events.js";
import { FakePolicyServer, fakeFetch, googleError, json, networkError, type Reply } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const FED = "projects/my-project/locations/us-central1/federations/lake";
const OK = json(200, { version: 1, bindings: [], etag: "ACAB" });

/** A client on a fake clock: each sleep moves the clock, each attempt takes `attemptMs`. */
function setup(reply: (n: number) => Reply, o: { callTimeoutMs?: number; attemptMs?: number } = {}) {
  let clock = 0;
  const delays: number[] = [];
  const events: CloudEvent[] = [];
  let n = 0;
  const f = fakeFetch(() => {
    clock += o.attemptMs ?? 10;
    return reply(++n);
  });
  const c = new CloudClient({
    endpoint: "http://127.0.0.1:1",
    env: {},
    fetch: f,
    now: () => clock,
    ...(o.callTimeoutMs ? { callTimeoutMs: o.callTimeoutMs } : {}),
    retry: {
      random: () => 0.5,
      sleep: async (ms: number) => {
        delays.push(ms);
        clock += ms;
      },
    },
    onEvent: (e) => events.push(e),
  });
  return { c, f, delays, events, elapsed: () => clock };
}

const withRetryAfter = (seconds: string): Reply =>
  json(503, { error: { code: 503, message: "try later", status: "UNAVAILABLE" } }, { "Retry-After": seconds });

describe("the call's deadline", () => {
  it("an endless 503 with Retry-After: 3600 fails at once when the wait would pass the deadline", async () => {
    const { c, delays } = setup(() => withRetryAfter("3600"), { callTimeoutMs: 2_000 });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(delays).toEqual([]);
    expect(err).toMatchObject({ status: "UNAVAILABLE", attempts: 1 });
    expect(err.message).toBe(
      `getIamPolicy ${RP} failed after 1 attempt over 0.0s (Retry-After 3600s is ` +
        `beyond the call timeout 2s): UNAVAILABLE (503): try later`,
    );
  });

  it("Retry-After is capped at 60 s, and the waits stop at the default 2-minute deadline", async () => {
    const { c, delays, elapsed } = setup(() => withRetryAfter("3600"));
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(delays).toEqual([60_000]);
    expect(elapsed()).toBeLessThanOrEqual(120_000);
    expect(err.message).toMatch(
      /failed after 2 attempts over 60\.0s \(Retry-After 3600s is beyond the call timeout 120s\)/,
    );
  });

  it("a Retry-After within the deadline is waited for", async () => {
    const { c, delays } = setup((n) => (n === 1 ? withRetryAfter("30") : OK));
    await expect(c.getIamPolicy("restorePlan", RP)).resolves.toMatchObject({ etag: "ACAB" });
    expect(delays).toEqual([30_000]);
  });

  it("a dead endpoint: backoffs stop at the deadline, and the error says what was tried", async () => {
    const { c, delays, events } = setup(() => networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"), {
      callTimeoutMs: 1_000,
    });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    // Waits 50, 100, 200, 400 (full jitter at 0.5); the next, 800, would end past 1 s.
    expect(delays).toEqual([50, 100, 200, 400]);
    expect(err.attempts).toBe(5);
    expect(err.message).toBe(
      `getIamPolicy ${RP} failed after 5 attempts over 0.8s (call timeout 1s): UNAVAILABLE: ` +
        `network error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1`,
    );
    expect((events.at(-1) as AttemptEvent).retry).toBe(false);
  });

  it("the last attempt only gets what is left of the deadline (a real timer)", async () => {
    // A server that never answers, a 30 s per-attempt timeout, a 150 ms call timeout.
    const f = fakeFetch(
      (_r, signal) =>
        new Promise<Reply>((_resolve, reject) =>
          signal?.addEventListener("abort", () => reject(signal.reason as Error)),
        ),
    );
    // The attempt's time is the deadline less the time since the call started, in whole ms of the
    // client's clock: with the real one, a millisecond boundary crossed between the two readings
    // left 149 ms (seen once, under load). The clock stands still here; the timer is real.
    const c = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: f,
      callTimeoutMs: 150,
      timeoutMs: 30_000,
      now: () => 1_000,
    });
    const t0 = Date.now();
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err.status).toBe("DEADLINE_EXCEEDED");
    expect(err.message).toMatch(/\(call timeout 150ms\): DEADLINE_EXCEEDED: no complete response within 150ms$/);
  });

  it("an access token that never comes is bounded by the deadline too", async () => {
    const f = fakeFetch(() => OK);
    const tokens = { source: "adc" as const, secrets: () => [], getToken: () => new Promise<string>(() => {}) };
    const c = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: f, tokens, callTimeoutMs: 100 });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(err.status).toBe("DEADLINE_EXCEEDED");
    expect(f.calls).toHaveLength(0);
  });
});

describe("500 INTERNAL", () => {
  const internal = googleError(500, "INTERNAL", "Internal error encountered.");

  it.each([
    ["getIamPolicy", (c: CloudClient) => c.getIamPolicy("restorePlan", RP)],
    ["getFederation", (c: CloudClient) => c.getFederation(FED)],
    [
      "setIamPolicy with an etag",
      (c: CloudClient) => c.setIamPolicy("restorePlan", RP, { bindings: [], etag: "ACAB" }),
    ],
  ])("is retried for %s (safe to repeat)", async (_what, call) => {
    const { c, f } = setup((n) => (n === 1 ? internal : json(200, { name: FED, etag: "ACAB" })));
    await call(c);
    expect(f.calls).toHaveLength(2);
  });

  it("is not retried for a setIamPolicy without an etag (a repeat could undo another writer)", async () => {
    const { c, f } = setup(() => internal);
    await expect(c.setIamPolicy("restorePlan", RP, { bindings: [] })).rejects.toMatchObject({
      status: "INTERNAL",
      attempts: 1,
    });
    expect(f.calls).toHaveLength(1);
  });

  it("is retried a bounded number of times", async () => {
    const { c, f } = setup(() => internal);
    await expect(c.getIamPolicy("restorePlan", RP)).rejects.toMatchObject({ status: "INTERNAL", attempts: 10 });
    expect(f.calls).toHaveLength(10);
  });

  it("a write that happened but answered 500: the repeat is ABORTED and the re-read finds it done", async () => {
    const server = new FakePolicyServer();
    server.put(RP, { version: 1, bindings: [] });
    let lost = false;
    server.beforeSet = (name, body) => {
      if (lost) return;
      lost = true;
      // The write happens; its answer is lost in a 500.
      server.mutate(name, (p) => (p.bindings = body.policy.bindings));
      return internal;
    };
    const c = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: server.fetch,
      retry: { sleep: async () => {} },
    });
    const r = await modifyPolicy(
      c,
      "restorePlan",
      RP,
      [{ kind: "setBinding", role: "roles/gkebackup.viewer", members: ["user:alice@example.com"] }],
      { sleep: async () => {} },
    );
    expect(server.policies.get(RP)?.bindings).toEqual([
      { role: "roles/gkebackup.viewer", members: ["user:alice@example.com"] },
    ]);
    // The re-read shows the change made: nothing more to write, and the write was this call's.
    expect(r.written).toBe(true);
    expect(server.sets).toBe(2);
  });
});
