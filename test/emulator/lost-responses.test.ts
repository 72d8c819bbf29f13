// Lost answers: a write the emulator commits and then answers 500, 503 or 504, or with a reset
// connection (POST /__emulator/faults {"lostResponses": …}), as Google sometimes does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { GET_RP, SET_EP, SET_RP } from "../support/emulator.js";
import {
  api,
  EP_OPEN,
  expectEnvelope,
  RP,
  RP_OPEN,
  seedWorld,
  tempDir,
  useSeededEmulator,
  type HttpResult,
} from "./helpers.js";

const { c } = useSeededEmulator({ resetEach: true });

let n = 0;
/** A policy no earlier write set: each call grants a new member. */
function freshPolicy(): { policy: { bindings: { role: string; members: string[] }[] } } {
  n++;
  return { policy: { bindings: [{ role: "roles/gkebackup.viewer", members: [`user:u${n}@example.com`] }] } };
}

async function lose(config: Record<string, unknown>): Promise<void> {
  const r = await c.admin("POST", "faults", config);
  expect(r.status, r.text).toBe(200);
}

/** Writes a fresh policy to RP_OPEN with `send`; expects the write committed; returns the answer. */
async function expectCommitted(send: (body: unknown) => Promise<HttpResult>): Promise<HttpResult> {
  const before = await c.getRestorePlan(RP_OPEN);
  const body = freshPolicy();
  const answer = await send(body);
  const after = await c.getRestorePlan(RP_OPEN);
  expect(after.status).toBe(200);
  expect(after.json.bindings).toEqual(body.policy.bindings);
  expect(after.json.etag).not.toBe(before.json.etag);
  return answer;
}

describe("lostResponses", () => {
  it.each([
    ["500", 500, "INTERNAL"],
    ["503", 503, "UNAVAILABLE"],
    ["504", 504, "DEADLINE_EXCEEDED"],
  ])("commits the write, then answers %s with Google's error body", async (kind, status, code) => {
    await lose({ lostResponses: { rate: 1, kinds: [kind] } });
    const r = await expectCommitted((body) => c.setRestorePlan(RP_OPEN, body));
    expectEnvelope(r, status, code);
    const s = (await c.admin("GET", "stats")).json;
    expect(s.lostResponses[SET_RP]).toEqual({ [kind]: 1 });
    expect(s.responses[SET_RP]).toEqual({ [code]: 1 });
  });

  it("commits the write, then resets the connection without an answer", async () => {
    await lose({ lostResponses: { rate: 1, kinds: ["reset"] } });
    let failure: unknown;
    await expectCommitted((body) =>
      c.setRestorePlan(RP_OPEN, body).catch((e: unknown) => {
        failure = e;
        return undefined as unknown as HttpResult;
      }),
    );
    expect(failure).toBeInstanceOf(TypeError);
    // A TCP reset: Node's fetch fails with ECONNRESET, as its http module does.
    expect((failure as { cause?: { code?: string } }).cause?.code).toBe("ECONNRESET");
    const s = (await c.admin("GET", "stats")).json;
    expect(s.lostResponses[SET_RP]).toEqual({ reset: 1 });
    expect(s.responses[SET_RP]).toEqual({});
    // The emulator serves the next connection as usual.
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
  });

  it("persists the write whose answer was lost, and a restart serves it", async () => {
    const { dir, cleanup } = await tempDir();
    const dataFile = join(dir, "world.json");
    try {
      const a = await startEmulator({ seed: seedWorld(), dataFile });
      const ca = api(a.url);
      await ca.admin("POST", "faults", { lostResponses: { rate: 1, kinds: ["503", "reset"] } });
      const body = freshPolicy();
      // Either kind: a 503 answer, or a rejected fetch.
      const r = await ca.setRestorePlan(RP_OPEN, body).catch(() => undefined);
      if (r) expectEnvelope(r, 503, "UNAVAILABLE");
      const onDisk = JSON.parse(readFileSync(dataFile, "utf8"));
      expect(onDisk.restorePlans.find((p: { name: string }) => p.name === RP_OPEN).policy.bindings).toEqual(
        body.policy.bindings,
      );
      await a.close();
      const b = await startEmulator({ seed: {}, dataFile });
      expect((await api(b.url).getRestorePlan(RP_OPEN)).json.bindings).toEqual(body.policy.bindings);
      await b.close();
    } finally {
      await cleanup();
    }
  });

  it("never loses at rate 0, and never loses a read", async () => {
    await lose({ lostResponses: { rate: 0, kinds: ["503", "reset"] } });
    for (let i = 0; i < 20; i++) expect((await c.setRestorePlan(RP_OPEN, freshPolicy())).status).toBe(200);
    await lose({ lostResponses: { rate: 1, kinds: ["503", "reset"] } });
    for (let i = 0; i < 20; i++) expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
    expect((await c.getEndpoint(EP_OPEN)).status).toBe(200);
    const s = (await c.admin("GET", "stats")).json;
    expect(s.responses[GET_RP]).toEqual({ OK: 20 });
    expect(s.lostResponses).toEqual({});
  });

  it("answers refused writes as usual: nothing was committed", async () => {
    await lose({ lostResponses: { rate: 1, kinds: ["503"] } });
    const before = await c.getRestorePlan(RP_OPEN);
    // A stale etag: 409 ABORTED.
    expectEnvelope(
      await c.setRestorePlan(RP_OPEN, { policy: { ...freshPolicy().policy, etag: "BwYAAAAAAAA=" } }),
      409,
      "ABORTED",
    );
    // No credentials on a project that requires them: 401.
    expectEnvelope(await c.setRestorePlan(RP, freshPolicy()), 401, "UNAUTHENTICATED");
    expectEnvelope(await c.setRestorePlan(RP_OPEN, { policy: { bindings: "nope" } }), 400, "INVALID_ARGUMENT");
    expect((await c.getRestorePlan(RP_OPEN)).json).toEqual(before.json);
    expect((await c.admin("GET", "stats")).json.lostResponses).toEqual({});
  });

  it("is not decided for a request an error rate already failed", async () => {
    const before = await c.getRestorePlan(RP_OPEN);
    await lose({ errorRates: { UNAVAILABLE: 1 }, lostResponses: { rate: 1, kinds: ["500"] } });
    expectEnvelope(await c.setRestorePlan(RP_OPEN, freshPolicy()), 503, "UNAVAILABLE");
    await c.admin("DELETE", "faults");
    expect((await c.getRestorePlan(RP_OPEN)).json).toEqual(before.json);
    expect((await c.admin("GET", "stats")).json.lostResponses).toEqual({});
  });

  it("is limited to the listed write methods, and by the top-level methods filter", async () => {
    await lose({ lostResponses: { rate: 1, kinds: ["503"], methods: [SET_EP] } });
    expect((await c.setRestorePlan(RP_OPEN, freshPolicy())).status).toBe(200);
    expectEnvelope(await c.setEndpoint(EP_OPEN, freshPolicy()), 503, "UNAVAILABLE");
    await lose({ methods: [SET_EP], lostResponses: { rate: 1, kinds: ["503"] } });
    expect((await c.setRestorePlan(RP_OPEN, freshPolicy())).status).toBe(200);
    expectEnvelope(await c.setEndpoint(EP_OPEN, freshPolicy()), 503, "UNAVAILABLE");
  });

  it("still applies latency to the write whose answer is lost", async () => {
    await lose({ latencyMs: 60, lostResponses: { rate: 1, kinds: ["504"] } });
    const t0 = performance.now();
    expectEnvelope(await c.setRestorePlan(RP_OPEN, freshPolicy()), 504, "DEADLINE_EXCEEDED");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55);
  });

  it("loses the same answers for the same seed", async () => {
    const config = { seed: 42, lostResponses: { rate: 0.5, kinds: ["500", "503", "504"] } };
    const run = async (): Promise<number[]> => {
      await lose(config);
      const out: number[] = [];
      for (let i = 0; i < 40; i++) out.push((await c.setRestorePlan(RP_OPEN, freshPolicy())).status);
      return out;
    };
    const first = await run();
    expect(await run()).toEqual(first);
    const lost = first.filter((s) => s !== 200);
    expect(lost.length).toBeGreaterThan(8);
    expect(lost.length).toBeLessThan(32);
    expect(new Set(lost)).toEqual(new Set([500, 503, 504]));
    await lose({ ...config, seed: 7 });
    const other: number[] = [];
    for (let i = 0; i < 40; i++) other.push((await c.setRestorePlan(RP_OPEN, freshPolicy())).status);
    expect(other).not.toEqual(first);
  });

  it("is reported by GET faults and cleared by DELETE", async () => {
    const config = { lostResponses: { rate: 0.3, kinds: ["503", "reset"] } };
    await lose(config);
    expect((await c.admin("GET", "faults")).json).toEqual(config);
    expect((await c.admin("DELETE", "faults")).status).toBe(200);
    expect((await c.admin("GET", "faults")).json).toEqual({});
    expect((await c.setRestorePlan(RP_OPEN, freshPolicy())).status).toBe(200);
  });

  it.each([
    [{ rate: 2, kinds: ["503"] }, "lostResponses.rate must be a number between 0 and 1"],
    [{ kinds: ["503"] }, "lostResponses.rate must be a number between 0 and 1"],
    [{ rate: 0.5, kinds: [] }, 'lostResponses.kinds must be a non-empty list of "500", "503", "504", "reset"'],
    [{ rate: 0.5 }, 'lostResponses.kinds must be a non-empty list of "500", "503", "504", "reset"'],
    [{ rate: 0.5, kinds: ["404"] }, 'lostResponses.kinds: "404" is not one of "500", "503", "504", "reset"'],
    [{ rate: 0.5, kinds: [503] }, 'lostResponses.kinds: 503 is not one of "500", "503", "504", "reset"'],
    [
      { rate: 0.5, kinds: ["503"], often: true },
      'lostResponses: unknown field "often" (expected rate, kinds, methods)',
    ],
    [
      { rate: 0.5, kinds: ["503"], methods: [GET_RP] },
      `lostResponses.methods: unknown write method ID "${GET_RP}" (known: `,
    ],
    [{ rate: 0.5, kinds: ["503"], methods: SET_RP }, "lostResponses.methods must be a list of method IDs"],
    [[0.5, "503"], 'lostResponses must be an object {"rate": 0.3, "kinds": ["503", "reset"]}'],
  ])("refuses %j with a clear message", async (lostResponses, message) => {
    const r = await c.admin("POST", "faults", { lostResponses });
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain(`Invalid fault configuration: ${message}`);
    expect((await c.admin("GET", "faults")).json).toEqual({});
  });
});
