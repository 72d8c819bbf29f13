// The whole-policy types (RestorePlanIamPolicy, EndpointIamPolicy), through the registry: what
// they normalise and report, what they claim, how they read a live policy and what they write.
import { describe, expect, it } from "vitest";
import {
  ENDPOINT_IAM_POLICY,
  RESTORE_PLAN_IAM_POLICY,
  adoptingDriver,
  resourceDriver,
} from "../../src/drivers/registry.js";
import type { IamDriver, IamInputs } from "../../src/drivers/types.js";
import type { AuditConfig, Policy } from "../../src/generated/schemas.js";

const DEFAULTS = { project: "p1", location: "us-central1" };
const COND = { title: "until 2030", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" };
const AUDIT: AuditConfig[] = [
  { service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:ops@example.com"] }] },
];

// aiplatform v1beta1's Policy has no auditConfigs: EndpointIamPolicy neither takes nor reports them.
const cases: { token: string; kind: "restorePlan" | "endpoint"; collection: string; audit: boolean }[] = [
  { token: RESTORE_PLAN_IAM_POLICY, kind: "restorePlan", collection: "restorePlans", audit: true },
  { token: ENDPOINT_IAM_POLICY, kind: "endpoint", collection: "endpoints", audit: false },
];

describe.each(cases)("$token", ({ token, kind, collection, audit }) => {
  /** `{ auditConfigs: x }` for a type with audit configs, nothing for one without. */
  const A = (x: unknown): { auditConfigs?: unknown } => (audit ? { auditConfigs: x } : {});
  const d = resourceDriver(token) as IamDriver;
  const full = (id: string, location = "us-central1", project = "p1") =>
    `projects/${project}/locations/${location}/${collection}/${id}`;
  const N = full("obj");

  it("is registered as the whole-policy type of its kind", () => {
    expect(d).toBeDefined();
    expect(d.kind).toBe(kind);
    expect(d.ownership).toBe("policy");
    expect(d.inputFields).toEqual(audit ? ["name", "bindings", "auditConfigs"] : ["name", "bindings"]);
    expect(d.replaceOn).toEqual(["name"]);
    expect(d.importIdForm).toBe("{name}");
    expect(adoptingDriver(kind, "policy")).toBe(d);
  });

  describe("normalize", () => {
    it("completes short names (id and location/id) and keeps full names", () => {
      expect(d.normalize({ name: "obj" }, DEFAULTS).inputs.name).toBe(N);
      expect(d.normalize({ name: "europe-west1/obj" }, DEFAULTS).inputs.name).toBe(full("obj", "europe-west1"));
      expect(d.normalize({ name: full("obj", "asia-east1", "other") }, {}).inputs.name).toBe(
        full("obj", "asia-east1", "other"),
      );
    });

    it("canonicalises bindings: members deduplicated by identity and sorted, conditions stripped", () => {
      const { inputs, problems } = d.normalize(
        {
          name: "obj",
          bindings: [
            { role: "roles/a.b", members: ["user:zed@example.com", "user:Amy@example.com", "user:amy@example.com"] },
            {
              role: "roles/a.b",
              members: ["group:g@example.com"],
              condition: { ...COND, description: "", location: { line: 3 } },
            },
          ],
          auditConfigs: AUDIT,
        },
        DEFAULTS,
      );
      expect(problems).toEqual([]);
      expect(inputs).toEqual({
        name: N,
        bindings: [
          { role: "roles/a.b", members: ["user:Amy@example.com", "user:zed@example.com"] },
          {
            role: "roles/a.b",
            members: ["group:g@example.com"],
            condition: { expression: COND.expression, title: COND.title },
          },
        ],
        ...A(AUDIT),
      });
    });

    it("leaves auditConfigs undefined when omitted (none), bindings empty when omitted", () => {
      expect(d.normalize({ name: "obj" }, DEFAULTS).inputs).toEqual({ name: N, bindings: [] });
    });

    it("reports problems at the paths of the offending name, role, member and repeated binding", () => {
      const { problems } = d.normalize(
        {
          name: "a/b/c",
          bindings: [
            { role: "viewer", members: ["user:ok@example.com", "bob"] },
            { role: "roles/x.y", members: ["user:a@example.com"] },
            { role: "roles/x.y", members: ["user:b@example.com"] },
            { role: "roles/x.y", members: ["user:b@example.com"], condition: COND },
          ],
        },
        DEFAULTS,
      );
      expect(problems.map((p) => p.path)).toEqual([
        ["name"],
        ["bindings", 0, "role"],
        ["bindings", 0, "members", 1],
        ["bindings", 2, "role"],
      ]);
      expect(problems[0]!.message).toContain(`"a/b/c" is not a valid ${kind} name`);
      expect(problems[3]!.message).toContain("repeats the role roles/x.y of bindings[1]");
    });

    it("reports an exempted member that is not a member, at its path", () => {
      const auditConfigs = [
        {
          service: "allServices",
          auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: ["user:ok@example.com", "bob"] }],
        },
        null,
        { service: "s", auditLogConfigs: [null] },
      ];
      const { problems } = d.normalize({ name: "obj", bindings: [], auditConfigs }, DEFAULTS);
      const at = [["auditConfigs", 0, "auditLogConfigs", 0, "exemptedMembers", 1]];
      expect(problems.map((p) => p.path)).toEqual(audit ? at : []);
    });

    it("does not throw on bindings that are not objects (the schema check reports them)", () => {
      const { inputs } = d.normalize({ name: "obj", bindings: [null, "x", 3, null] }, DEFAULTS);
      expect(inputs.bindings).toHaveLength(4);
    });

    it("reports a short name without provider defaults", () => {
      expect(d.normalize({ name: "obj" }, {}).problems).toEqual([
        { path: ["name"], message: expect.stringContaining("provider.project is not set") },
      ]);
    });
  });

  it("claims the whole object; describes, ids and outputs by the name", () => {
    const i: IamInputs = { name: N, bindings: [{ role: "roles/a.b", members: ["user:a@example.com"] }] };
    expect(d.claims(i)).toEqual([{ scope: "policy", kind, object: N }]);
    expect(d.policyName(i)).toBe(N);
    expect(d.describe(i)).toBe(`whole IAM policy of ${N}`);
    expect(d.id(i)).toBe(N);
    const outputs = { name: N, bindings: i.bindings, ...A([]), etag: "BwE=", id: N, project: "p1" };
    expect(d.outputs(i, "BwE=")).toEqual(outputs);
    expect(d.outputs({ ...i, auditConfigs: AUDIT }, "e").auditConfigs).toEqual(audit ? AUDIT : undefined);
  });

  describe("observe", () => {
    const live: Policy = {
      version: 3,
      etag: "e",
      bindings: [
        { role: "roles/z.z", members: ["user:b@example.com", "user:a@example.com"] },
        { role: "roles/a.b", members: ["user:amy@example.com"] },
        { role: "roles/a.b", members: ["group:g@example.com"], condition: COND },
        { role: "roles/empty", members: [] },
      ],
      auditConfigs: AUDIT,
    };

    it("reads the whole live policy: bindings canonical and ordered, empty ones dropped, audit configs kept", () => {
      expect(d.observe({ name: N, bindings: [] }, live)).toEqual({
        name: N,
        bindings: [
          { role: "roles/a.b", members: ["user:amy@example.com"] },
          {
            role: "roles/a.b",
            members: ["group:g@example.com"],
            condition: { expression: COND.expression, title: COND.title },
          },
          { role: "roles/z.z", members: ["user:a@example.com", "user:b@example.com"] },
        ],
        ...A(AUDIT),
      });
    });

    it("keeps the configured spelling of members when the live set is the same", () => {
      const seen = d.observe({ name: N, bindings: [{ role: "roles/a.b", members: ["user:AMY@example.com"] }] }, live)!;
      expect(seen.bindings![0]).toEqual({ role: "roles/a.b", members: ["user:AMY@example.com"] });
    });

    it("keeps the live members when the set differs", () => {
      const seen = d.observe(
        { name: N, bindings: [{ role: "roles/a.b", members: ["user:AMY@example.com", "user:x@example.com"] }] },
        live,
      )!;
      expect(seen.bindings![0]).toEqual({ role: "roles/a.b", members: ["user:amy@example.com"] });
    });

    it("merges duplicate live bindings of one role and condition", () => {
      const seen = d.observe(
        { name: N },
        {
          bindings: [
            { role: "roles/r", members: ["user:a@example.com"] },
            { role: "roles/r", members: ["user:b@example.com", "user:A@example.com"] },
          ],
        },
      )!;
      const merged = { role: "roles/r", members: ["user:a@example.com", "user:b@example.com"] };
      expect(seen).toEqual({ name: N, bindings: [merged], ...A([]) });
    });

    it("an empty live policy is observed as an empty policy (still there, nothing granted)", () => {
      expect(d.observe({ name: N, bindings: [] }, { etag: "e" })).toEqual({ name: N, bindings: [], ...A([]) });
    });
  });

  describe("modifications", () => {
    const desired: IamInputs = {
      name: N,
      bindings: [{ role: "roles/a.b", members: ["user:a@example.com"] }],
      auditConfigs: AUDIT,
    };
    it("create and update set the whole policy", () => {
      expect(d.modifications(undefined, desired)).toEqual([
        { kind: "setPolicy", bindings: desired.bindings, auditConfigs: AUDIT },
      ]);
      expect(d.modifications({ name: N, bindings: [] }, desired)).toEqual([
        { kind: "setPolicy", bindings: desired.bindings, auditConfigs: AUDIT },
      ]);
    });
    it("an omitted auditConfigs sets none", () => {
      expect(d.modifications(undefined, { name: N, bindings: [] })).toEqual([
        { kind: "setPolicy", bindings: [], auditConfigs: [] },
      ]);
    });
    it("destroy leaves an empty policy", () => {
      expect(d.modifications(desired, undefined)).toEqual([{ kind: "setPolicy", bindings: [], auditConfigs: [] }]);
    });
  });

  describe("parseImportId", () => {
    it("accepts the object's full or short name", () => {
      expect(d.parseImportId(N, {})).toEqual({ name: N });
      expect(d.parseImportId("obj", DEFAULTS)).toEqual({ name: N });
      expect(d.parseImportId("europe-west1/obj", DEFAULTS)).toEqual({ name: full("obj", "europe-west1") });
      expect(d.parseImportId(`  ${N}  `, {})).toEqual({ name: N });
    });
    it("refuses extra fields, empty IDs and bad names", () => {
      for (const bad of [`${N} roles/a.b`, "", "   ", `${N} roles/a.b user:a@example.com`]) {
        expect(d.parseImportId(bad, DEFAULTS)).toEqual(expect.stringContaining('is malformed; expected "{name}"'));
      }
      expect(d.parseImportId("a/b/c", DEFAULTS)).toEqual(expect.stringContaining("is not a valid"));
      expect(d.parseImportId("obj", {})).toEqual(expect.stringContaining("provider.project is not set"));
    });
  });

  it("adopt takes the whole live policy", () => {
    const live: Policy = {
      bindings: [{ role: "roles/a.b", members: ["user:B@example.com", "user:a@example.com"] }],
      auditConfigs: AUDIT,
      etag: "e",
    };
    const bindings = [{ role: "roles/a.b", members: ["user:a@example.com", "user:B@example.com"] }];
    expect(d.adopt({ name: N }, live)).toEqual({ name: N, bindings, ...A(AUDIT) });
    expect(d.adopt({ name: N }, {})).toEqual({ name: N, bindings: [], ...A([]) });
  });
});
