// Cloud Resource Manager v3 projects.get over raw HTTP: a project by ID or number, Google's 403
// for the unknown, routing, auth, stats, faults and quotas.
import { describe, expect, it } from "vitest";
import { useFileEmulator } from "../support/emulator.js";
import { api, call, expectEnvelope } from "./helpers.js";

const GET_PROJECT = "cloudresourcemanager.projects.get";
const TOKEN = { Authorization: "Bearer admin-token" };

const emu = useFileEmulator({
  seed: {
    projects: {
      "my-project": {
        number: "123456789012",
        callers: { "admin-token": "user:admin@example.com" },
        iamAdmins: ["user:admin@example.com"],
      },
      "open-project": { number: "210987654321" },
      "numberless-project": {},
    },
    restorePlans: [{ name: "projects/implied-project/locations/us-central1/restorePlans/daily" }],
  },
});
const c = api(() => emu.url);
const get = (p: string, headers: Record<string, string> = {}) =>
  call(emu.url, "GET", `/v3/projects/${p}`, undefined, headers);

function expectDenied(r: Awaited<ReturnType<typeof get>>, segment: string): void {
  expectEnvelope(r, 403, "PERMISSION_DENIED");
  expect(r.json.error.message).toBe(
    `Permission 'resourcemanager.projects.get' denied on resource ` +
      `'//cloudresourcemanager.googleapis.com/projects/${segment}' (or it may not exist).`,
  );
  expect(r.json.error.details[0]).toMatchObject({
    reason: "IAM_PERMISSION_DENIED",
    metadata: { permission: "resourcemanager.projects.get", resource: `projects/${segment}` },
  });
}

describe("projects.get", () => {
  it("answers a project by ID with its number in the name", async () => {
    const r = await get("open-project");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json; charset=UTF-8");
    expect(r.json).toEqual({
      name: "projects/210987654321",
      projectId: "open-project",
      state: "ACTIVE",
      displayName: "open-project",
    });
  });

  it("answers the same body by number, also percent-encoded, and int enums on request", async () => {
    const byId = await get("my-project", TOKEN);
    expect(byId.json).toMatchObject({ name: "projects/123456789012", projectId: "my-project" });
    expect((await get("123456789012", TOKEN)).text).toBe(byId.text);
    expect((await call(emu.url, "GET", "/v3/projects%2F123456789012", undefined, TOKEN)).text).toBe(byId.text);
    expect((await get("123456789012?$alt=json;enum-encoding=int", TOKEN)).json.state).toBe(1);
  });

  it("answers 403 PERMISSION_DENIED for an unknown ID or number", async () => {
    expectDenied(await get("no-such-project"), "no-such-project");
    expectDenied(await get("999999999999"), "999999999999");
  });

  it("answers 403 for a project without a seeded number, or only implied by its objects", async () => {
    expectDenied(await get("numberless-project"), "numberless-project");
    expectDenied(await get("implied-project"), "implied-project");
  });

  it("wants a caller's token where the project declares callers", async () => {
    expectEnvelope(await get("my-project"), 401, "UNAUTHENTICATED");
    expectEnvelope(await get("123456789012", { Authorization: "Bearer nobody" }), 401, "UNAUTHENTICATED");
  });

  it("answers other HTTP methods and malformed segments as unknown routes", async () => {
    const post = await call(emu.url, "POST", "/v3/projects/open-project", {});
    expectEnvelope(post, 404, "NOT_FOUND");
    expect(post.json.error.message).toBe(
      "The requested URL POST /v3/projects/open-project was not found on this server.",
    );
    expectEnvelope(await call(emu.url, "DELETE", "/v3/projects/open-project"), 404, "NOT_FOUND");
    for (const p of [
      "/v3/projects/",
      "/v3/projects/a:b",
      "/v3/projects/a/b",
      "/v3/projects/a%2Fb",
      "/v1/projects/open-project",
    ]) {
      expectEnvelope(await call(emu.url, "GET", p), 404, "NOT_FOUND");
    }
  });

  it("is counted in stats under its method ID", async () => {
    await c.admin("POST", "stats/reset");
    await get("open-project");
    await get("no-such-project");
    await call(emu.url, "POST", "/v3/projects/open-project", {}); // not a route: not counted
    const s = (await c.admin("GET", "stats")).json;
    expect(s.requests[GET_PROJECT]).toBe(2);
    expect(s.responses[GET_PROJECT]).toEqual({ OK: 1, PERMISSION_DENIED: 1 });
  });

  it("takes injected faults filtered by its method ID", async () => {
    try {
      expect((await c.admin("POST", "faults", { errorRates: { UNAVAILABLE: 1 }, methods: [GET_PROJECT] })).status).toBe(
        200,
      );
      expectEnvelope(await get("open-project"), 503, "UNAVAILABLE");
      expect((await c.getRestorePlan("projects/implied-project/locations/us-central1/restorePlans/daily")).status).toBe(
        200,
      );
      await c.admin("POST", "faults", {
        errorRates: { UNAVAILABLE: 1 },
        methods: ["gkebackup.projects.locations.restorePlans.getIamPolicy"],
      });
      expect((await get("open-project")).status).toBe(200);
    } finally {
      await c.admin("DELETE", "faults");
    }
  });

  it("is limited by a cloudresourcemanager quota per project", async () => {
    try {
      expect((await c.admin("POST", "faults", { quotas: { cloudresourcemanager: 60 } })).status).toBe(200);
      expect((await get("open-project")).status).toBe(200);
      const over = await get("open-project");
      expectEnvelope(over, 429, "RESOURCE_EXHAUSTED");
      expect(over.json.error.details[0].metadata.service).toBe("cloudresourcemanager.googleapis.com");
      expect(over.headers.get("retry-after")).toBe("1");
      expect((await get("no-such-project")).status).toBe(403);
    } finally {
      await c.admin("DELETE", "faults");
    }
  });

  it(
    "charges a project named by its number to the same quota as by " + "its ID (Google charges one consumer project)",
    async () => {
      try {
        expect((await c.admin("POST", "faults", { quotas: { cloudresourcemanager: 60, gkebackup: 60 } })).status).toBe(
          200,
        );
        expect((await get("open-project")).status).toBe(200);
        expectEnvelope(await get("210987654321"), 429, "RESOURCE_EXHAUSTED");
        // An IAM read too: the quota is charged before the object is looked up (this one is not there).
        const rp = (project: string) =>
          call(emu.url, "GET", `/v1/projects/${project}/locations/us-central1/restorePlans/daily:getIamPolicy`);
        expect((await rp("open-project")).status).toBe(404);
        expectEnvelope(await rp("210987654321"), 429, "RESOURCE_EXHAUSTED");
      } finally {
        await c.admin("DELETE", "faults");
      }
    },
  );
});
