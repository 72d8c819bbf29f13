import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { createTokenProvider } from "../../src/cloud/auth.js";
import { fakeFetch, googleError, json, type Reply } from "./fakes.js";
import {
  AdaptiveBucket,
  GOOGLE_DEFAULT_RATES,
  MIN_RATE_PER_MINUTE,
  parseRate,
  RateLimiter,
} from "../../src/cloud/rate-limit.js";

/** A fake clock: sleeping advances time, nothing waits. */
function fakeClock() {
  const c = { t: 0, now: () => c.t, sleep: async (ms: number) => void (c.t += ms) };
  return c;
}

/** Takes `n` tokens one after another; returns the times they were granted. */
async function grants(b: AdaptiveBucket, clock: { now: () => number }, n: number): Promise<number[]> {
  const at: number[] = [];
  for (let i = 0; i < n; i++) {
    await b.take();
    at.push(clock.now());
  }
  return at;
}

describe("AdaptiveBucket", () => {
  it("respects its rate: a second's burst, then one token per 60000/rate ms", async () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(600, clock);
    const at = await grants(b, clock, 70);
    // 10 at once (a second's worth), then one every 100 ms.
    expect(at.slice(0, 10).every((t) => t === 0)).toBe(true);
    expect(at[10]).toBe(100);
    expect(at[69]).toBe(6_000);
    // Never more than rate/60 + rate·Δt/60000 in any interval.
    for (let i = 0; i < at.length; i++)
      for (let j = i; j < at.length; j++)
        expect(j - i + 1).toBeLessThanOrEqual(10 + ((at[j]! - at[i]!) * 600) / 60_000 + 1e-9);
  });

  it("a slow rate still grants one token at a time", async () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(30, clock);
    const at = await grants(b, clock, 3);
    expect(at).toEqual([0, 2_000, 4_000]);
  });

  it("slows by 30% on a throttle, then recovers gradually to the ceiling", () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(600, clock);
    b.throttled();
    expect(b.perMinute).toBe(420);
    // The refusals of one burst count once…
    b.throttled();
    expect(b.perMinute).toBe(420);
    // …a second later, again.
    clock.t += 1_000;
    b.throttled();
    expect(b.perMinute).toBeCloseTo(294, 6);
    b.succeeded();
    expect(b.perMinute).toBeCloseTo(324, 6);
    for (let i = 0; i < 100; i++) b.succeeded();
    expect(b.perMinute).toBe(600);
    expect(b.throttles).toBe(3);
  });

  it("never backs off below the floor", () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(10, clock);
    for (let i = 0; i < 10; i++) {
      b.throttled();
      clock.t += 1_000;
    }
    expect(b.perMinute).toBe(MIN_RATE_PER_MINUTE);
  });

  it("honours Retry-After: no token before it has passed, and the bucket starts empty", async () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(600, clock);
    await grants(b, clock, 3);
    b.throttled(2_500);
    expect(b.tryTake()).toBe(2_500);
    clock.t = 2_000;
    expect(b.tryTake()).toBe(500);
    await b.take();
    // Granted as the pause ends (the pause refilled the bucket, up to a second's worth at 300/min).
    expect(clock.now()).toBe(2_500);
  });

  it("an unlimited bucket grants at once, and on a throttle backs off from the rate it was sending at", async () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(Infinity, clock);
    for (let i = 0; i < 20; i++) {
      expect(b.tryTake()).toBe(0);
      clock.t += 50; // 1,200 per minute
    }
    // One refusal among twenty is not yet a quota: it only pauses.
    b.throttled(1_000);
    expect(b.perMinute).toBe(Infinity);
    b.throttled();
    b.throttled();
    b.throttled();
    expect(b.perMinute).toBeCloseTo(840, 0);
    expect(b.tryTake(true)).toBeGreaterThan(0); // emptied: the retry waits for a token, not the pause
    // Recovery keeps probing upward by 5% of the rate it was sending at.
    b.succeeded();
    expect(b.perMinute).toBeCloseTo(900, 0);
  });

  it("an unlimited bucket with too few recent grants to measure only pauses", () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(Infinity, clock);
    b.tryTake();
    b.throttled(2_000);
    expect(b.perMinute).toBe(Infinity);
    expect(b.tryTake()).toBe(2_000);
    expect(b.tryTake(true)).toBe(0);
  });

  it("an aborted take returns at once", async () => {
    const clock = fakeClock();
    const b = new AdaptiveBucket(6, clock);
    await b.take();
    const ac = new AbortController();
    ac.abort();
    await b.take(ac.signal);
    expect(clock.now()).toBe(0);
  });
});

describe("RateLimiter", () => {
  it("keeps one bucket per (service, project), a write taking from the service's write bucket too", () => {
    const l = new RateLimiter(GOOGLE_DEFAULT_RATES, fakeClock());
    const read = l.bucketsFor("gkebackup", "p1", false);
    const write = l.bucketsFor("gkebackup", "p1", true);
    expect(read).toHaveLength(1);
    expect(write).toHaveLength(2);
    expect(write[0]).toBe(read[0]);
    expect(write[1]!.ceiling).toBe(600);
    expect(read[0]!.ceiling).toBe(6_000);
    expect(l.bucketsFor("gkebackup", "p2", false)[0]).not.toBe(read[0]);
    // Without a write rate, a write takes from the service's bucket only.
    expect(l.bucketsFor("metastore", "p1", true)).toHaveLength(1);
    expect(new RateLimiter({}, fakeClock()).bucketsFor("aiplatform", "p", true)[0]!.ceiling).toBe(Infinity);
  });
});

describe("parseRate", () => {
  const services = ["gkebackup", "aiplatform", "metastore"];
  it("reads service=N/min, /s, /h and service.write", () => {
    expect(parseRate("gkebackup=600/min", services)).toEqual({ key: "gkebackup", perMinute: 600 });
    expect(parseRate("aiplatform=5/s", services)).toEqual({ key: "aiplatform", perMinute: 300 });
    expect(parseRate("metastore=120/h", services)).toEqual({ key: "metastore", perMinute: 2 });
    expect(parseRate("gkebackup.write=100", services)).toEqual({ key: "gkebackup.write", perMinute: 100 });
  });
  it("refuses what it cannot read", () => {
    expect(parseRate("gkebackup", services)).toMatch(/not service=N\/min/);
    expect(parseRate("storage=5/min", services)).toMatch(/unknown service "storage"/);
    expect(parseRate("gkebackup=0/min", services)).toMatch(/at least 1\/min/);
  });
});

describe("the client paces its calls", () => {
  const RP = (p: string, id: string) => `projects/${p}/locations/us-central1/restorePlans/${id}`;
  const OK = json(200, { version: 1, bindings: [], etag: "ACAB" });

  function client(replies: (n: number) => Reply, rates: Record<string, number>) {
    const clock = fakeClock();
    const sent: number[] = [];
    let n = 0;
    const f = fakeFetch(() => (sent.push(clock.t), replies(++n)));
    const c = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: f,
      now: clock.now,
      retry: { sleep: clock.sleep, random: () => 0.5 },
      rates,
      pacingClock: clock,
    });
    return { c, clock, sent };
  }

  it("at the --rate of the service, per project", async () => {
    const { c, sent } = client(() => OK, { gkebackup: 60 });
    for (let i = 0; i < 3; i++) await c.getIamPolicy("restorePlan", RP("p1", `r${i}`));
    await c.getIamPolicy("restorePlan", RP("p2", "r"));
    expect(sent).toEqual([0, 1_000, 2_000, 2_000]);
  });

  // A plan of 1,200 policies on a machine without credentials spent 5 s failing reads that were
  // never sent: each waited for its turn at the read rate first. A call that cannot be sent (no
  // access token, or an origin found unreachable) fails at once and takes no turn.
  it("a call that cannot be sent for want of an access token waits for no turn, and takes none", async () => {
    const clock = fakeClock();
    let searches = 0;
    const tokens = createTokenProvider({
      google: true,
      env: {},
      createAdc: () => ({
        getAccessToken: async () => {
          searches++;
          throw new Error("Could not load the default credentials");
        },
      }),
    });
    const f = fakeFetch(() => OK);
    const c = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: f,
      now: clock.now,
      retry: { sleep: clock.sleep, random: () => 0.5 },
      rates: { gkebackup: 60 },
      pacingClock: clock,
      tokens,
    });
    for (let i = 0; i < 5; i++)
      await expect(c.getIamPolicy("restorePlan", RP("p1", `r${i}`))).rejects.toMatchObject({
        status: "UNAUTHENTICATED",
        httpStatus: 0,
      });
    expect(clock.t).toBe(0);
    expect(searches).toBe(1);
    expect(f.calls).toHaveLength(0);
  });

  it("calls to an origin found unreachable fail unsent without waiting for a turn", async () => {
    const clock = fakeClock();
    const f = fakeFetch(() => {
      throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    });
    const c = new CloudClient({
      endpoint: "http://127.0.0.1:1",
      env: {},
      fetch: f,
      now: clock.now,
      retry: { sleep: clock.sleep, random: () => 0.5, maxAttempts: 1 },
      rates: { gkebackup: 60 },
      pacingClock: clock,
    });
    // A second's burst (1 at 60/min), then one call a second: the first three are sent, at 0, 1 s and 2 s.
    for (let i = 0; i < 3; i++)
      await expect(c.getIamPolicy("restorePlan", RP("p1", `r${i}`))).rejects.toMatchObject({ status: "UNAVAILABLE" });
    const t = clock.t;
    for (let i = 3; i < 8; i++)
      await expect(c.getIamPolicy("restorePlan", RP("p1", `r${i}`))).rejects.toThrow(
        /could not be reached by the last 3 calls/,
      );
    expect(clock.t).toBe(t);
    expect(f.calls).toHaveLength(3);
  });

  it("a 429 with Retry-After pauses the bucket and halves its rate; the call succeeds after it", async () => {
    const { c, sent } = client(
      (n) =>
        n === 2 ? { ...googleError(429, "RESOURCE_EXHAUSTED", "Quota exceeded"), headers: { "Retry-After": "3" } } : OK,
      { gkebackup: 600 },
    );
    await c.getIamPolicy("restorePlan", RP("p", "a"));
    await c.getIamPolicy("restorePlan", RP("p", "b"));
    await c.getIamPolicy("restorePlan", RP("p", "c"));
    // The retry of b waits for the Retry-After (3 s); c goes right after it, at the slowed rate's pace.
    expect(sent.slice(0, 3)).toEqual([0, 0, 3_000]);
    expect(sent[3]).toBeGreaterThanOrEqual(3_000);
  });
});
