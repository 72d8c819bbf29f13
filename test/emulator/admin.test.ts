// The admin API: stats, reset, faults, world, objects and projects.
import { describe, expect, it } from "vitest";
import { GET_FED, GET_RP, SET_RP } from "../support/emulator.js";
import { ADMIN, expectEnvelope, FED, RP, RP_OPEN, useSeededEmulator, VIEWER } from "./helpers.js";

const { c } = useSeededEmulator({ resetEach: true });

describe("stats", () => {
  it("counts every API request by method ID, including refused ones, and resets", async () => {
    await c.getRestorePlan(RP_OPEN);
    await c.getRestorePlan(RP); // 401
    await c.getRestorePlan(RP, 3, VIEWER); // 403
    await c.setRestorePlan(RP_OPEN, { policy: { bindings: [] } });
    await c.getFederation(FED, VIEWER);
    await c.admin("GET", "world"); // admin calls are not counted
    const s = (await c.admin("GET", "stats")).json;
    expect(s.requests[GET_RP]).toBe(3);
    expect(s.requests[SET_RP]).toBe(1);
    expect(s.requests[GET_FED]).toBe(1);
    expect(s.requests["aiplatform.projects.locations.endpoints.getIamPolicy"]).toBe(0);
    expect(s.responses[GET_RP]).toEqual({ OK: 1, UNAUTHENTICATED: 1, PERMISSION_DENIED: 1 });
    expect(s.responses[SET_RP]).toEqual({ OK: 1 });

    expect((await c.admin("POST", "stats/reset")).status).toBe(200);
    const z = (await c.admin("GET", "stats")).json;
    expect(z.requests[GET_RP]).toBe(0);
    expect(z.responses[GET_RP]).toEqual({});
  });
});

describe("faults", () => {
  async function outcomes(n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await c.getRestorePlan(RP_OPEN)).status);
    return out;
  }

  it("injects errors at the configured rates, deterministically for a seed", async () => {
    const config = { errorRates: { UNAVAILABLE: 0.3, RESOURCE_EXHAUSTED: 0.2 }, seed: 42 };
    expect((await c.admin("POST", "faults", config)).status).toBe(200);
    const first = await outcomes(200);
    await c.admin("POST", "faults", config);
    const second = await outcomes(200);
    expect(second).toEqual(first);
    const n503 = first.filter((s) => s === 503).length;
    const n429 = first.filter((s) => s === 429).length;
    expect(n503).toBeGreaterThan(35);
    expect(n503).toBeLessThan(85);
    expect(n429).toBeGreaterThan(20);
    expect(n429).toBeLessThan(60);
    expect(first.filter((s) => s === 200).length).toBe(200 - n503 - n429);

    await c.admin("POST", "faults", { ...config, seed: 7 });
    expect(await outcomes(200)).not.toEqual(first);

    const stats = (await c.admin("GET", "stats")).json;
    expect(stats.requests[GET_RP]).toBe(600);
    expect(stats.responses[GET_RP].UNAVAILABLE).toBeGreaterThan(0);
  });

  it("answers injected errors in Google's envelope, with Retry-After when asked", async () => {
    await c.admin("POST", "faults", { errorRates: { RESOURCE_EXHAUSTED: 1 }, retryAfterSeconds: 2 });
    const r = await c.getRestorePlan(RP_OPEN);
    expectEnvelope(r, 429, "RESOURCE_EXHAUSTED");
    expect(r.headers.get("retry-after")).toBe("2");
    await c.admin("POST", "faults", { errorRates: { UNAVAILABLE: 1 }, retryAfterSeconds: 1 });
    const u = await c.getRestorePlan(RP_OPEN);
    expectEnvelope(u, 503, "UNAVAILABLE");
    expect(u.headers.get("retry-after")).toBe("1");
    await c.admin("POST", "faults", { errorRates: { PERMISSION_DENIED: 1 } });
    const d = await c.getRestorePlan(RP_OPEN);
    expectEnvelope(d, 403, "PERMISSION_DENIED");
    expect(d.headers.get("retry-after")).toBeNull();
    // The admin API itself is never faulted.
    expect((await c.admin("GET", "world")).status).toBe(200);
    expect((await c.admin("DELETE", "faults")).status).toBe(200);
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
  });

  it("restricts faults to the listed methods and adds latency", async () => {
    // A latency far above what a loaded machine adds to a local call (the read used to have 50 ms).
    await c.admin("POST", "faults", { errorRates: { UNAVAILABLE: 1 }, methods: [SET_RP], latencyMs: 3_000 });
    const t0 = performance.now();
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(1_500);
    const t1 = performance.now();
    expectEnvelope(await c.setRestorePlan(RP_OPEN, { policy: {} }), 503, "UNAVAILABLE");
    expect(performance.now() - t1).toBeGreaterThanOrEqual(2_950);
  });

  it("refuses invalid fault configurations", async () => {
    expectEnvelope(await c.admin("POST", "faults", { errorRates: { NOPE: 0.5 } }), 400, "INVALID_ARGUMENT");
    expectEnvelope(
      await c.admin("POST", "faults", { errorRates: { UNAVAILABLE: 0.7, INTERNAL: 0.7 } }),
      400,
      "INVALID_ARGUMENT",
    );
    expectEnvelope(await c.admin("POST", "faults", { methods: ["x.y"] }), 400, "INVALID_ARGUMENT");
    expectEnvelope(await c.admin("POST", "faults", { latencyMs: -1 }), 400, "INVALID_ARGUMENT");
  });

  it("is cleared by reset", async () => {
    await c.admin("POST", "faults", { errorRates: { UNAVAILABLE: 1 } });
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(503);
    await c.admin("POST", "reset");
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
  });
});

describe("reset and world", () => {
  it("reloads the seed: policies written since are gone", async () => {
    const seeded = await c.getRestorePlan(RP, 3, ADMIN);
    const w = await c.setRestorePlan(
      RP,
      { policy: { bindings: [{ role: "roles/x.y", members: ["user:z@example.com"] }] } },
      ADMIN,
    );
    expect(w.status).toBe(200);
    await c.admin("POST", "reset");
    const after = await c.getRestorePlan(RP, 3, ADMIN);
    expect(after.json.bindings).toEqual(seeded.json.bindings);
  });

  it("GET world returns the seed's shape with current policies and etags", async () => {
    const w = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings: [{ role: "roles/x.y", members: ["user:z@example.com"] }] },
    });
    const world = (await c.admin("GET", "world")).json;
    expect(Object.keys(world).sort()).toEqual(["endpoints", "federations", "projects", "restorePlans"]);
    expect(world.projects["my-project"].number).toBe("123456789012");
    expect(world.restorePlans.find((o: { name: string }) => o.name === RP_OPEN).policy).toEqual(w.json);
    expect(world.federations.find((f: { name: string }) => f.name === FED).uid).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("objects and projects", () => {
  const NEW_RP = "projects/open-project/locations/asia-east1/restorePlans/fresh";
  const NEW_FED = "projects/123456789012/locations/us-central1/federations/added";

  it("adds, replaces and removes objects", async () => {
    expectEnvelope(await c.getRestorePlan(NEW_RP), 404, "NOT_FOUND");
    const add = await c.admin("POST", "objects", {
      kind: "restorePlan",
      name: NEW_RP,
      policy: { bindings: [{ role: "roles/x.y", members: ["user:a@example.com"] }] },
    });
    expect(add.status).toBe(200);
    const got = await c.getRestorePlan(NEW_RP);
    expect(got.json.bindings).toEqual([{ role: "roles/x.y", members: ["user:a@example.com"] }]);
    // Replace: now without a policy.
    await c.admin("POST", "objects", { kind: "restorePlan", name: NEW_RP });
    expect((await c.getRestorePlan(NEW_RP)).json.bindings).toBeUndefined();
    expect((await c.admin("DELETE", `objects?name=${encodeURIComponent(NEW_RP)}`)).status).toBe(200);
    expectEnvelope(await c.getRestorePlan(NEW_RP), 404, "NOT_FOUND");
    expectEnvelope(await c.admin("DELETE", `objects?name=${encodeURIComponent(NEW_RP)}`), 404, "NOT_FOUND");
  });

  it("adds a federation named by project number (stored under the project ID)", async () => {
    const add = await c.admin("POST", "objects", { kind: "federation", name: NEW_FED, labels: { a: "b" } });
    expect(add.status).toBe(200);
    expect(add.json.name).toBe("projects/my-project/locations/us-central1/federations/added");
    const r = await c.getFederation("projects/my-project/locations/us-central1/federations/added", VIEWER);
    expect(r.json).toMatchObject({ name: NEW_FED, labels: { a: "b" }, state: "ACTIVE" });
  });

  it("refuses invalid objects", async () => {
    expectEnvelope(await c.admin("POST", "objects", { kind: "bucket", name: "x" }), 400, "INVALID_ARGUMENT");
    expectEnvelope(
      await c.admin("POST", "objects", { kind: "endpoint", name: "projects/p/endpoints/x" }),
      400,
      "INVALID_ARGUMENT",
    );
    const badMember = await c.admin("POST", "objects", {
      kind: "endpoint",
      name: "projects/p/locations/l/endpoints/x",
      policy: { bindings: [{ role: "roles/a", members: ["bob"] }] },
    });
    expectEnvelope(badMember, 400, "INVALID_ARGUMENT");
    expect(badMember.json.error.message).toContain("bob");
  });

  it("sets a project's callers and admins", async () => {
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
    const put = await c.admin("PUT", "projects/open-project", { number: "999", callers: { t1: "user:x@example.com" } });
    expect(put.status).toBe(200);
    expectEnvelope(await c.getRestorePlan(RP_OPEN), 401, "UNAUTHENTICATED");
    expect(
      (await c.getRestorePlan(RP_OPEN.replace("open-project", "999"), 3, { Authorization: "Bearer t1" })).status,
    ).toBe(200);
    await c.admin("PUT", "projects/open-project", {
      callers: { t1: "user:x@example.com" },
      iamAdmins: ["user:y@example.com"],
    });
    expectEnvelope(await c.getRestorePlan(RP_OPEN, 3, { Authorization: "Bearer t1" }), 403, "PERMISSION_DENIED");
    expectEnvelope(await c.admin("PUT", "projects/open-project", { number: "123456789012" }), 400, "INVALID_ARGUMENT");
    expectEnvelope(await c.admin("PUT", "projects/open-project", { owner: "me" }), 400, "INVALID_ARGUMENT");
  });

  it("answers unknown admin routes with a JSON 404", async () => {
    expectEnvelope(await c.admin("GET", "nope"), 404, "NOT_FOUND");
    expectEnvelope(await c.admin("DELETE", "stats"), 404, "NOT_FOUND");
  });
});
