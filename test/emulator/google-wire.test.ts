// Where the emulator's wire used to differ from Google's (issue 46), over raw HTTP: the methods
// of each collection's IAM surface, policy versions, the aiplatform v1beta1 dialect, proto3 JSON
// parsing and printing, etags as bytes, partial responses (`fields=`).
import { describe, expect, it } from "vitest";
import { ADMIN, call, EP, expectEnvelope, FED, FED_DEFAULTS, RP, useSeededEmulator, VIEWER } from "./helpers.js";

const { emu, c } = useSeededEmulator({ resetEach: true });

const COND = { title: "weekdays", expression: "request.time.getDayOfWeek() < 5" };
const post = (path: string, body?: unknown, headers = ADMIN) => call(emu.url, "POST", path, body, headers);
const get = (path: string, headers = ADMIN) => call(emu.url, "GET", path, undefined, headers);

describe("testIamPermissions and the federation's IAM methods", () => {
  it("answers testIamPermissions on a restore plan with the permissions the caller holds", async () => {
    const ask = { permissions: ["gkebackup.restorePlans.getIamPolicy", "gkebackup.restorePlans.setIamPolicy"] };
    expect((await post(`/v1/${RP}:testIamPermissions`, ask)).json).toEqual(ask);
    // eve is not in the project's iamAdmins: she holds neither (an empty answer omits the field).
    const viewer = await post(`/v1/${RP}:testIamPermissions`, ask, VIEWER);
    expect(viewer.status).toBe(200);
    expect(viewer.json).toEqual({});
  });

  it("takes an endpoint's permissions as repeated query parameters, with no body", async () => {
    const q = "permissions=aiplatform.endpoints.getIamPolicy&permissions=aiplatform.endpoints.setIamPolicy";
    const r = await post(`/v1beta1/${EP}:testIamPermissions?${q}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ permissions: ["aiplatform.endpoints.getIamPolicy", "aiplatform.endpoints.setIamPolicy"] });
    expectEnvelope(
      await post(`/v1beta1/${EP}:testIamPermissions`, { permissions: ["x.y.z"] }),
      400,
      "INVALID_ARGUMENT",
    );
    expectEnvelope(await post(`/v1beta1/${EP}:testIamPermissions?permissions=aiplatform.*`), 400, "INVALID_ARGUMENT");
  });

  it("serves the federation's getIamPolicy, setIamPolicy and testIamPermissions", async () => {
    const empty = await get(`/v1alpha/${FED}:getIamPolicy`);
    expect(empty.status).toBe(200);
    const policy = {
      bindings: [{ role: "roles/metastore.user", members: ["user:ann@example.com"] }],
      etag: empty.json.etag,
    };
    const set = await post(`/v1alpha/${FED}:setIamPolicy`, { policy });
    expect(set.status).toBe(200);
    expect((await get(`/v1alpha/${FED}:getIamPolicy?options.requestedPolicyVersion=3`)).json).toEqual(set.json);
    const t = await post(`/v1alpha/${FED}:testIamPermissions`, { permissions: ["metastore.federations.get"] });
    expect(t.json).toEqual({ permissions: ["metastore.federations.get"] });
  });
});

describe("policy versions", () => {
  it("answers a version 0 or 1 read of a conditional policy with _withcond_ role names", async () => {
    const bindings = [
      { role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] },
      { role: "roles/gkebackup.admin", members: ["user:dan@example.com"], condition: COND },
    ];
    expect((await c.setRestorePlan(RP, { policy: { version: 3, bindings } }, ADMIN)).status).toBe(200);
    for (const version of [0, 1]) {
      const r = await c.getRestorePlan(RP, version, ADMIN);
      expect(r.status).toBe(200);
      expect(r.json.version).toBe(1);
      expect(r.json.bindings[0]).toEqual(bindings[0]);
      expect(r.json.bindings[1].role).toMatch(/^roles\/gkebackup\.admin_withcond_[0-9a-f]{20}$/);
      expect(r.json.bindings[1].condition).toBeUndefined();
    }
    expect((await get(`/v1/${RP}:getIamPolicy`)).json.version).toBe(1);
    expect((await c.getRestorePlan(RP, 3, ADMIN)).json.bindings[1]).toEqual(bindings[1]);
  });

  it("answers version 1 for a policy written at version 3 without conditions", async () => {
    const bindings = [{ role: "roles/aiplatform.user", members: ["user:ann@example.com"] }];
    expect((await c.setEndpoint(EP, { policy: { version: 3, bindings } }, ADMIN)).status).toBe(200);
    expect((await c.getEndpoint(EP, 1, ADMIN)).json.version).toBe(1);
    expect((await c.getEndpoint(EP, 3, ADMIN)).json.version).toBe(1);
  });
});

describe("aiplatform v1beta1: Policy has no auditConfigs, SetIamPolicyRequest no updateMask", () => {
  it("refuses auditConfigs in an endpoint's policy", async () => {
    const policy = {
      bindings: [],
      auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" }] }],
    };
    const r = await c.setEndpoint(EP, { policy }, ADMIN);
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain("Unknown name \"auditConfigs\" at 'policy'");
  });

  it("refuses an updateMask on an endpoint's setIamPolicy", async () => {
    const r = await c.setEndpoint(EP, { policy: { bindings: [] }, updateMask: "bindings,etag" }, ADMIN);
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain('Unknown name "updateMask"');
  });
});

describe("proto3 JSON as Google's front end parses it", () => {
  it("takes null fields as absent, numbers as strings, snake_case and lowerCamel names", async () => {
    const policy = {
      version: "3",
      etag: null,
      bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com"], condition: null }],
      audit_configs: [
        { service: "allServices", audit_log_configs: [{ log_type: "DATA_READ", exempted_members: null }] },
      ],
    };
    const r = await c.setRestorePlan(RP, { policy, update_mask: "bindings,audit_configs" }, ADMIN);
    expect(r.status).toBe(200);
    expect(r.json.auditConfigs).toEqual([{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" }] }]);
    const read = await get(`/v1/${RP}:getIamPolicy?options.requested_policy_version=3`);
    expect(read.json).toEqual(r.json);
    expect((await post(`/v1beta1/${EP}:getIamPolicy`, { options: null })).status).toBe(200);
  });

  it("compares etags as bytes: unpadded equals padded; non-base64 is a 400", async () => {
    const { etag } = (await c.getRestorePlan(RP, 3, ADMIN)).json as { etag: string };
    const bindings = [{ role: "roles/gkebackup.viewer", members: ["user:ann@example.com"] }];
    const unpadded = await c.setRestorePlan(RP, { policy: { bindings, etag: etag.replace(/=+$/, "") } }, ADMIN);
    expect(unpadded.status).toBe(200);
    const bad = await c.setRestorePlan(RP, { policy: { bindings, etag: "not base64!" } }, ADMIN);
    expectEnvelope(bad, 400, "INVALID_ARGUMENT");
  });

  it("omits a federation's empty fields", async () => {
    const r = await c.getFederation(FED_DEFAULTS);
    expect(r.status).toBe(200);
    for (const field of ["labels", "backendMetastores", "stateMessage"]) expect(r.json).not.toHaveProperty(field);
  });

  it("honours fields= (partial responses)", async () => {
    expect((await get(`/v1/${RP}:getIamPolicy?fields=etag`)).json).toEqual({ etag: expect.any(String) });
    const fed = await get(`/v1alpha/${FED}?fields=name,labels`);
    expect(Object.keys(fed.json).sort()).toEqual(["labels", "name"]);
  });

  it("refuses a malformed fields= selector with 400, before the method runs (a write is not made)", async () => {
    const deep = `${"a(".repeat(3_000)}b${")".repeat(3_000)}`;
    for (const fields of [
      "bindings(",
      "bindings)role",
      "etag,,bindings",
      "bindings/",
      "/etag",
      "bind ings",
      "etag()",
      deep,
    ]) {
      const r = await get(`/v1/${RP}:getIamPolicy?fields=${encodeURIComponent(fields)}`);
      expectEnvelope(r, 400, "INVALID_ARGUMENT");
      expect(r.json.error.message).toContain("Invalid field selection");
    }
    const before = (await get(`/v1/${RP}:getIamPolicy`)).json;
    const policy = {
      bindings: [{ role: "roles/gkebackup.viewer", members: ["user:fields@example.com"] }],
      etag: before.etag,
    };
    expectEnvelope(
      await post(`/v1/${RP}:setIamPolicy?fields=${encodeURIComponent("bindings(")}`, { policy }),
      400,
      "INVALID_ARGUMENT",
    );
    expect((await get(`/v1/${RP}:getIamPolicy`)).json).toEqual(before);
    // Well-formed selectors still work, nested and with a wildcard.
    for (const fields of ["etag", "bindings/role", "bindings(role,members),etag", "*"]) {
      expect((await get(`/v1/${RP}:getIamPolicy?fields=${encodeURIComponent(fields)}`)).status).toBe(200);
    }
  });

  it("refuses a query parameter the method does not have, as Google's front end does", async () => {
    const r = await get(`/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3&foo=1`);
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain('Unknown name "foo": Cannot bind query parameter.');
    // gkebackup v1 takes the permissions in the body only.
    const inQuery = await post(`/v1/${RP}:testIamPermissions?permissions=gkebackup.restorePlans.get`);
    expectEnvelope(inQuery, 400, "INVALID_ARGUMENT");
    // System parameters are every method's.
    const system = "fields=etag&prettyPrint=false&alt=json&quotaUser=q&key=k&%24.xgafv=2";
    expect((await get(`/v1/${RP}:getIamPolicy?${system}`)).status).toBe(200);
  });
});
