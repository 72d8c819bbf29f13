// The five Google methods over raw HTTP: policies, etags, validation, auth, federations.
import { describe, expect, it } from "vitest";
import {
  ADMIN,
  BASE64_ETAG,
  call,
  EP,
  EP_OPEN,
  expectEnvelope,
  FED,
  FED_DEFAULTS,
  RP,
  RP_OPEN,
  useSeededEmulator,
  VIEWER,
} from "./helpers.js";

const { emu, c } = useSeededEmulator({ resetEach: true });

describe("getIamPolicy", () => {
  it("returns the seeded restore plan policy (GET) with a base64 etag", async () => {
    const r = await c.getRestorePlan(RP, 3, ADMIN);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json; charset=UTF-8");
    expect(r.json).toMatchObject({
      version: 1,
      bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] }],
    });
    expect(r.json.etag).toMatch(BASE64_ETAG);
    expect(Buffer.from(r.json.etag, "base64")).toHaveLength(8);
  });

  it("returns the seeded endpoint policy (POST, empty body or options in the body)", async () => {
    const r = await c.getEndpoint(EP, 3, ADMIN);
    expect(r.status).toBe(200);
    expect(r.json.bindings).toEqual([{ role: "roles/aiplatform.user", members: ["group:ml@example.com"] }]);
    expect(r.json.etag).toMatch(BASE64_ETAG);
    const withBody = await call(
      emu.url,
      "POST",
      `/v1beta1/${EP}:getIamPolicy`,
      { options: { requestedPolicyVersion: 3 } },
      ADMIN,
    );
    expect(withBody.json).toEqual(r.json);
  });

  it("returns an empty policy as version 1 with an etag and no bindings", async () => {
    const r = await c.getRestorePlan(RP_OPEN);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(["etag", "version"]);
    expect(r.json.version).toBe(1);
  });

  it("accepts the project number and percent-encoded paths for the same object", async () => {
    const byId = await c.getRestorePlan(RP, 3, ADMIN);
    const byNumber = await c.getRestorePlan(RP.replace("my-project", "123456789012"), 3, ADMIN);
    expect(byNumber.json).toEqual(byId.json);
    const encoded = await call(
      emu.url,
      "GET",
      `/v1/${RP.replace(/\//g, "%2F")}%3AgetIamPolicy?options.requestedPolicyVersion=3`,
      undefined,
      ADMIN,
    );
    expect(encoded.status).toBe(200);
    expect(encoded.json).toEqual(byId.json);
  });

  it("refuses requested versions other than 0, 1, 3", async () => {
    expectEnvelope(await c.getRestorePlan(RP_OPEN, 2), 400, "INVALID_ARGUMENT");
    expectEnvelope(
      await call(emu.url, "GET", `/v1/${RP_OPEN}:getIamPolicy?options.requestedPolicyVersion=abc`),
      400,
      "INVALID_ARGUMENT",
    );
    expect((await call(emu.url, "GET", `/v1/${RP_OPEN}:getIamPolicy`)).status).toBe(200);
  });

  it("answers 404 NOT_FOUND in Google's envelope for an unknown restore plan", async () => {
    const name = "projects/open-project/locations/us-central1/restorePlans/nope";
    const r = await c.getRestorePlan(name);
    expectEnvelope(r, 404, "NOT_FOUND");
    expect(r.json.error.message).toContain(name);
    expectEnvelope(
      await c.setEndpoint("projects/open-project/locations/x/endpoints/nope", { policy: {} }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("setIamPolicy", () => {
  it("writes with the current etag, returns the new policy and a new etag", async () => {
    const before = await c.getEndpoint(EP_OPEN);
    const policy = {
      version: 1,
      etag: before.json.etag,
      bindings: [{ role: "roles/aiplatform.user", members: ["user:a@example.com"] }],
    };
    const r = await c.setEndpoint(EP_OPEN, { policy });
    expect(r.status).toBe(200);
    expect(r.json.bindings).toEqual(policy.bindings);
    expect(r.json.etag).toMatch(BASE64_ETAG);
    expect(r.json.etag).not.toBe(before.json.etag);
    expect((await c.getEndpoint(EP_OPEN)).json).toEqual(r.json);
  });

  it("answers 409 ABORTED for a stale etag and leaves the policy alone", async () => {
    const first = await c.getRestorePlan(RP_OPEN);
    const ok = await c.setRestorePlan(RP_OPEN, {
      policy: { etag: first.json.etag, bindings: [{ role: "roles/x.y", members: ["user:a@example.com"] }] },
    });
    expect(ok.status).toBe(200);
    const stale = await c.setRestorePlan(RP_OPEN, {
      policy: { etag: first.json.etag, bindings: [{ role: "roles/x.y", members: ["user:b@example.com"] }] },
    });
    expectEnvelope(stale, 409, "ABORTED");
    expect(stale.text).toContain('"status":"ABORTED"');
    expect(stale.json.error.message).toContain("concurrent policy changes");
    expect((await c.getRestorePlan(RP_OPEN)).json).toEqual(ok.json);
  });

  it("treats a write without an etag as unconditional", async () => {
    const r = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings: [{ role: "roles/x.y", members: ["user:a@example.com"] }] },
    });
    expect(r.status).toBe(200);
  });

  it("refuses a member without a type prefix, naming it", async () => {
    const r = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings: [{ role: "roles/x.y", members: ["bob@example.com"] }] },
    });
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain("bob@example.com");
  });

  it("refuses a malformed role, naming it", async () => {
    const r = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings: [{ role: "owner", members: ["user:a@example.com"] }] },
    });
    expectEnvelope(r, 400, "INVALID_ARGUMENT");
    expect(r.json.error.message).toContain('"owner"');
  });

  it("refuses a conditional binding unless the version is 3", async () => {
    const binding = {
      role: "roles/x.y",
      members: ["user:a@example.com"],
      condition: { title: "t", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" },
    };
    const v1 = await c.setRestorePlan(RP_OPEN, { policy: { version: 1, bindings: [binding] } });
    expectEnvelope(v1, 400, "INVALID_ARGUMENT");
    expect(v1.json.error.message).toContain("conditional role bindings require policy version 3");
    const v3 = await c.setRestorePlan(RP_OPEN, { policy: { version: 3, bindings: [binding] } });
    expect(v3.status).toBe(200);
    expect(v3.json.version).toBe(3);
    // Below version 3 the condition is not shown; the role is suffixed _withcond_ (Google's v1 form).
    const read1 = await c.getRestorePlan(RP_OPEN, 1);
    const withcond = { role: expect.stringMatching(/^roles\/x\.y_withcond_/), members: binding.members };
    expect(read1.json.bindings).toEqual([withcond]);
    expect((await c.getRestorePlan(RP_OPEN, 3)).json.bindings).toEqual([binding]);
  });

  it("refuses conditions on basic roles and with public members", async () => {
    const condition = { title: "t", expression: "true" };
    expectEnvelope(
      await c.setRestorePlan(RP_OPEN, {
        policy: { version: 3, bindings: [{ role: "roles/viewer", members: ["user:a@example.com"], condition }] },
      }),
      400,
      "INVALID_ARGUMENT",
    );
    expectEnvelope(
      await c.setRestorePlan(RP_OPEN, {
        policy: { version: 3, bindings: [{ role: "roles/x.y", members: ["allUsers"], condition }] },
      }),
      400,
      "INVALID_ARGUMENT",
    );
    // Unconditional public grants are fine.
    expect(
      (await c.setRestorePlan(RP_OPEN, { policy: { bindings: [{ role: "roles/x.y", members: ["allUsers"] }] } }))
        .status,
    ).toBe(200);
  });

  it("refuses version 2 and more than 1,500 principals", async () => {
    expectEnvelope(await c.setRestorePlan(RP_OPEN, { policy: { version: 2, bindings: [] } }), 400, "INVALID_ARGUMENT");
    const members = Array.from({ length: 1501 }, (_, i) => `user:u${i}@example.com`);
    const big = await c.setRestorePlan(RP_OPEN, { policy: { bindings: [{ role: "roles/x.y", members }] } });
    expectEnvelope(big, 400, "INVALID_ARGUMENT");
    expect(big.json.error.message).toContain("1500");
    expect(
      (
        await c.setRestorePlan(RP_OPEN, {
          policy: { bindings: [{ role: "roles/x.y", members: members.slice(0, 1500) }] },
        })
      ).status,
    ).toBe(200);
  });

  it("refuses more than 250 Google groups, counting each occurrence", async () => {
    const groups = Array.from({ length: 126 }, (_, i) => `group:g${i}@example.com`);
    const over = await c.setRestorePlan(RP_OPEN, {
      policy: {
        bindings: [
          { role: "roles/x.y", members: groups },
          { role: "roles/x.z", members: groups.slice(1) },
        ],
      },
    });
    expectEnvelope(over, 400, "INVALID_ARGUMENT");
    expect(over.json.error.message).toContain("251 Google groups");
    expect(
      (
        await c.setRestorePlan(RP_OPEN, {
          policy: {
            bindings: [
              { role: "roles/x.y", members: groups },
              { role: "roles/x.z", members: groups.slice(2) },
            ],
          },
        })
      ).status,
    ).toBe(200);
  });

  it("refuses a write with the etag of a conditional policy unless it says version 3", async () => {
    const condition = { title: "t", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" };
    const v3 = await c.setRestorePlan(RP_OPEN, {
      policy: { version: 3, bindings: [{ role: "roles/x.y", members: ["user:a@example.com"], condition }] },
    });
    const plain = { bindings: [{ role: "roles/x.y", members: ["user:a@example.com"] }] };
    const v1 = await c.setRestorePlan(RP_OPEN, { policy: { version: 1, etag: v3.json.etag, ...plain } });
    expectEnvelope(v1, 400, "INVALID_ARGUMENT");
    expect(v1.json.error.message).toContain("version 3");
    // With version 3 the conditions may go; without an etag, Google lets a version-1 write overwrite them.
    expect((await c.setRestorePlan(RP_OPEN, { policy: { version: 3, etag: v3.json.etag, ...plain } })).status).toBe(
      200,
    );
    await c.setRestorePlan(RP_OPEN, {
      policy: { version: 3, bindings: [{ role: "roles/x.y", members: ["user:a@example.com"], condition }] },
    });
    expect((await c.setRestorePlan(RP_OPEN, { policy: { version: 1, ...plain } })).status).toBe(200);
  });

  it("accepts the principal forms Google documents beyond e-mail addresses", async () => {
    const members = [
      "serviceAccount:my-project.svc.id.goog[my-namespace/my-kubernetes-sa]",
      "deleted:group:admins@example.com?uid=123456789012345678901",
      "deleted:principal://iam.googleapis.com/locations/global/workforcePools/staff-pool/subject/alice",
      "principalSet://iam.googleapis.com/locations/global/workforcePools/staff-pool/*",
    ];
    const r = await c.setRestorePlan(RP_OPEN, { policy: { bindings: [{ role: "roles/x.y", members }] } });
    expect(r.status).toBe(200);
    expect(r.json.bindings).toEqual([{ role: "roles/x.y", members }]);
  });

  it("merges duplicate bindings, drops empty ones and stores version 0 as 1", async () => {
    const r = await c.setRestorePlan(RP_OPEN, {
      policy: {
        version: 0,
        bindings: [
          { role: "roles/x.y", members: ["user:a@example.com"] },
          { role: "roles/x.z", members: [] },
          { role: "roles/x.y", members: ["user:b@example.com", "user:a@example.com"] },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.version).toBe(1);
    expect(r.json.bindings).toEqual([{ role: "roles/x.y", members: ["user:a@example.com", "user:b@example.com"] }]);
  });

  it("ignores auditConfigs unless the update mask names them", async () => {
    const auditConfigs = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" }] }];
    const bindings = [{ role: "roles/x.y", members: ["user:a@example.com"] }];
    const noMask = await c.setRestorePlan(RP_OPEN, { policy: { bindings, auditConfigs } });
    expect(noMask.status).toBe(200);
    expect(noMask.json.auditConfigs).toBeUndefined();
    expect(noMask.json.bindings).toEqual(bindings);

    const masked = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings, auditConfigs },
      updateMask: "bindings,etag,auditConfigs",
    });
    expect(masked.json.auditConfigs).toEqual(auditConfigs);

    // Default mask again: the stored auditConfigs are kept, not cleared.
    const kept = await c.setRestorePlan(RP_OPEN, { policy: { bindings: [] } });
    expect(kept.json.auditConfigs).toEqual(auditConfigs);
    expect(kept.json.bindings).toBeUndefined();

    // A mask without bindings leaves the bindings alone.
    const onlyAudit = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings, auditConfigs: [] },
      updateMask: "auditConfigs",
    });
    expect(onlyAudit.json.auditConfigs).toBeUndefined();
    expect(onlyAudit.json.bindings).toBeUndefined();

    expectEnvelope(await c.setRestorePlan(RP_OPEN, { policy: {}, updateMask: "owners" }), 400, "INVALID_ARGUMENT");
  });

  it("refuses a request without a policy and unknown fields", async () => {
    expectEnvelope(await c.setRestorePlan(RP_OPEN, {}), 400, "INVALID_ARGUMENT");
    expectEnvelope(await c.setRestorePlan(RP_OPEN, { policy: {}, extra: 1 }), 400, "INVALID_ARGUMENT");
    expectEnvelope(
      await c.setRestorePlan(RP_OPEN, { policy: { bindings: [{ role: "roles/x.y", members: [1] }] } }),
      400,
      "INVALID_ARGUMENT",
    );
    expectEnvelope(
      await c.setRestorePlan(RP_OPEN, { policy: { bindings: [{ members: ["user:a@example.com"] }] } }),
      400,
      "INVALID_ARGUMENT",
    );
  });

  it("reads omitted members as empty, as proto3 JSON does", async () => {
    const r = await c.setRestorePlan(RP_OPEN, {
      policy: { bindings: [{ role: "roles/x.y" }, { role: "roles/x.z", members: ["user:a@example.com"] }] },
    });
    expect(r.status).toBe(200);
    expect(r.json.bindings).toEqual([{ role: "roles/x.z", members: ["user:a@example.com"] }]);
  });

  it("accepts numeric enums and answers with them for enum-encoding=int", async () => {
    const r = await c.setRestorePlan(RP_OPEN, {
      policy: { auditConfigs: [{ service: "s", auditLogConfigs: [{ logType: 3 }] }] },
      updateMask: "auditConfigs",
    });
    expect(r.json.auditConfigs).toEqual([{ service: "s", auditLogConfigs: [{ logType: "DATA_READ" }] }]);
    const ints = await call(
      emu.url,
      "GET",
      `/v1/${RP_OPEN}:getIamPolicy?options.requestedPolicyVersion=3&$alt=json%3Benum-encoding%3Dint`,
    );
    expect(ints.json.auditConfigs[0].auditLogConfigs[0].logType).toBe(3);
  });
});

describe("auth", () => {
  it("answers 401 UNAUTHENTICATED without a token where callers are declared", async () => {
    const r = await c.getRestorePlan(RP);
    expectEnvelope(r, 401, "UNAUTHENTICATED");
    expect(r.headers.get("www-authenticate")).toContain("Bearer");
    expectEnvelope(await c.getFederation(FED), 401, "UNAUTHENTICATED");
  });

  it("answers 401 for an unknown token", async () => {
    expectEnvelope(await c.getEndpoint(EP, 3, { Authorization: "Bearer nope" }), 401, "UNAUTHENTICATED");
    expectEnvelope(await c.getEndpoint(EP, 3, { Authorization: "Basic YWJj" }), 401, "UNAUTHENTICATED");
  });

  it("answers 403 PERMISSION_DENIED to a caller not in iamAdmins, before existence", async () => {
    const r = await c.getRestorePlan(RP, 3, VIEWER);
    expectEnvelope(r, 403, "PERMISSION_DENIED");
    expect(r.json.error.message).toBe(
      `Permission 'gkebackup.restorePlans.getIamPolicy' denied on resource '${RP}' (or it may not exist).`,
    );
    const missing = await c.setEndpoint(
      "projects/my-project/locations/us-central1/endpoints/ghost",
      { policy: {} },
      VIEWER,
    );
    expectEnvelope(missing, 403, "PERMISSION_DENIED");
    expect(missing.json.error.message).toContain("aiplatform.endpoints.setIamPolicy");
    // The admin sees the 404.
    expectEnvelope(
      await c.setEndpoint("projects/my-project/locations/us-central1/endpoints/ghost", { policy: {} }, ADMIN),
      404,
      "NOT_FOUND",
    );
  });

  it("accepts anyone, with or without a token, where no callers are declared", async () => {
    expect((await c.getRestorePlan(RP_OPEN)).status).toBe(200);
    expect((await c.getRestorePlan(RP_OPEN, 3, { Authorization: "Bearer whatever" })).status).toBe(200);
  });

  it("lets any known caller read a federation (iamAdmins do not apply)", async () => {
    expect((await c.getFederation(FED, VIEWER)).status).toBe(200);
  });
});

describe("federations.get", () => {
  it("returns every field, named by project number, with RFC 3339 times", async () => {
    const r = await c.getFederation(FED, VIEWER);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(
      // stateMessage is empty, so omitted (proto3 JSON).
      [
        "backendMetastores",
        "createTime",
        "endpointUri",
        "labels",
        "name",
        "state",
        "uid",
        "updateTime",
        "version",
      ].sort(),
    );
    expect(r.json).toMatchObject({
      name: "projects/123456789012/locations/us-central1/federations/lake",
      labels: { owner: "data-eng" },
      version: "3.1.2",
      backendMetastores: {
        "1": { name: "projects/my-project/locations/us-central1/services/hive", metastoreType: "DATAPROC_METASTORE" },
      },
      endpointUri: "thrift://10.0.0.7:9083",
      state: "ACTIVE",
    });
    const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
    expect(r.json.createTime).toMatch(rfc3339);
    expect(r.json.updateTime).toMatch(rfc3339);
    expect(r.json.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Same object through the number.
    expect((await c.getFederation(FED.replace("my-project", "123456789012"), VIEWER)).json).toEqual(r.json);
  });

  it("fills realistic defaults for omitted fields", async () => {
    const r = await c.getFederation(FED_DEFAULTS);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: FED_DEFAULTS, version: "3.1.2", state: "ACTIVE" });
    expect(r.json.endpointUri).toMatch(/^thrift:\/\//);
    expect(r.json.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 404 for an unknown federation", async () => {
    expectEnvelope(
      await c.getFederation("projects/open-project/locations/us-central1/federations/none"),
      404,
      "NOT_FOUND",
    );
  });
});
