// The binding and member types of both objects (RestorePlanIamBinding, RestorePlanIamMember,
// EndpointIamBinding, EndpointIamMember), through the registry: normalize with its problems'
// paths, claims, describe, id, outputs, observe, modifications, import IDs and adopt.
import { describe, expect, it } from "vitest";
import {
  ENDPOINT_IAM_BINDING,
  ENDPOINT_IAM_MEMBER,
  RESTORE_PLAN_IAM_BINDING,
  RESTORE_PLAN_IAM_MEMBER,
  adoptingDriver,
  resourceDriver,
} from "../../src/drivers/registry.js";
import type { IamDriver, IamInputs } from "../../src/drivers/types.js";
import type { Policy } from "../../src/generated/schemas.js";

const DEFAULTS = { project: "p1", location: "us-central1" };
const COND = { title: "until 2030", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" };
const CANON_COND = { expression: COND.expression, title: COND.title };

type Kind = "restorePlan" | "endpoint";
const objects: { kind: Kind; collection: string; binding: string; member: string }[] = [
  {
    kind: "restorePlan",
    collection: "restorePlans",
    binding: RESTORE_PLAN_IAM_BINDING,
    member: RESTORE_PLAN_IAM_MEMBER,
  },
  { kind: "endpoint", collection: "endpoints", binding: ENDPOINT_IAM_BINDING, member: ENDPOINT_IAM_MEMBER },
];

describe.each(objects)("binding and member types of $kind", ({ kind, collection, binding, member }) => {
  const B = resourceDriver(binding) as IamDriver;
  const M = resourceDriver(member) as IamDriver;
  const full = (id: string, location = "us-central1", project = "p1") =>
    `projects/${project}/locations/${location}/${collection}/${id}`;
  const N = full("obj");

  it("are registered with their kind and ownership", () => {
    expect([B.kind, B.ownership, M.kind, M.ownership]).toEqual([kind, "binding", kind, "member"]);
    expect(B.inputFields).toEqual(["name", "role", "condition", "members"]);
    expect(M.inputFields).toEqual(["name", "role", "condition", "member"]);
    expect(B.replaceOn).toEqual(["name", "role", "condition"]);
    expect(M.replaceOn).toEqual(["name", "role", "condition", "member"]);
    expect(adoptingDriver(kind)).toBe(B);
    expect(adoptingDriver(kind, "binding")).toBe(B);
    expect(adoptingDriver(kind, "member")).toBe(M);
  });

  describe("normalize", () => {
    it("binding: full name, members deduplicated by identity and sorted, condition canonical", () => {
      const { inputs, problems } = B.normalize(
        {
          name: "obj",
          role: "roles/a.b",
          members: ["user:zed@example.com", "user:Amy@example.com", "user:amy@example.com"],
          condition: { ...COND, description: "" },
        },
        DEFAULTS,
      );
      expect(problems).toEqual([]);
      expect(inputs).toEqual({
        name: N,
        role: "roles/a.b",
        members: ["user:Amy@example.com", "user:zed@example.com"],
        condition: CANON_COND,
      });
    });

    it("member: full name from location/id, the member as written", () => {
      const { inputs, problems } = M.normalize(
        { name: "europe-west1/obj", role: "roles/a.b", member: "user:Amy@Example.com" },
        DEFAULTS,
      );
      expect(problems).toEqual([]);
      expect(inputs).toEqual({ name: full("obj", "europe-west1"), role: "roles/a.b", member: "user:Amy@Example.com" });
    });

    it("reports problems at the paths of the name, role and each bad member", () => {
      const b = B.normalize(
        { name: "projects/p1/obj", role: "viewer", members: ["user:ok@example.com", "bob", " user:a@example.com"] },
        DEFAULTS,
      );
      expect(b.problems.map((p) => p.path)).toEqual([["name"], ["role"], ["members", 1], ["members", 2]]);
      const m = M.normalize({ name: "a/b/c", role: "roles/ok", member: "alice@example.com" }, DEFAULTS);
      expect(m.problems.map((p) => p.path)).toEqual([["name"], ["member"]]);
      expect(M.normalize({ name: "obj", role: "roles/ok", member: "" }, DEFAULTS).problems).toEqual([
        { path: ["member"], message: "a member must be a non-empty string" },
      ]);
      expect(M.normalize({ name: "obj", role: "roles/ok", member: "user:a@example.com" }, {}).problems).toEqual([
        { path: ["name"], message: expect.stringContaining("provider.project is not set") },
      ]);
    });
  });

  const bi: IamInputs = { name: N, role: "roles/a.b", members: ["user:a@example.com"] };
  const mi: IamInputs = { name: N, role: "roles/a.b", member: "user:a@example.com" };

  it("claims, describe, id and outputs", () => {
    expect(B.claims(bi)).toEqual([{ scope: "binding", kind, object: N, role: "roles/a.b" }]);
    expect(B.claims({ ...bi, condition: CANON_COND })).toEqual([
      { scope: "binding", kind, object: N, role: "roles/a.b", condition: CANON_COND },
    ]);
    expect(M.claims(mi)).toEqual([
      { scope: "member", kind, object: N, role: "roles/a.b", member: "user:a@example.com" },
    ]);
    expect(M.claims({ ...mi, condition: CANON_COND })).toEqual([
      { scope: "member", kind, object: N, role: "roles/a.b", member: "user:a@example.com", condition: CANON_COND },
    ]);
    expect(B.describe(bi)).toBe(`binding (roles/a.b on ${N})`);
    expect(M.describe(mi)).toBe(`member (user:a@example.com, roles/a.b on ${N})`);
    expect(B.id(bi)).toBe(`${N} roles/a.b`);
    expect(B.id({ ...bi, condition: CANON_COND })).toBe(`${N} roles/a.b until 2030`);
    expect(M.id(mi)).toBe(`${N} roles/a.b user:a@example.com`);
    expect(M.id({ ...mi, condition: CANON_COND })).toBe(`${N} roles/a.b user:a@example.com until 2030`);
    expect(B.outputs(bi, "e")).toEqual({ ...bi, etag: "e", id: `${N} roles/a.b`, project: "p1" });
    expect(M.outputs(mi, "e")).toEqual({ ...mi, etag: "e", id: `${N} roles/a.b user:a@example.com`, project: "p1" });
    expect(B.policyName(bi)).toBe(N);
  });

  describe("observe", () => {
    const live: Policy = {
      etag: "e",
      bindings: [
        { role: "roles/a.b", members: ["user:AMY@example.com", "user:bob@example.com"] },
        { role: "roles/a.b", members: ["user:cond@example.com"], condition: COND },
        { role: "roles/empty", members: [] },
      ],
    };

    it("binding: keeps the configured spelling when the live set is the same, else the live members", () => {
      expect(B.observe({ ...bi, members: ["user:amy@example.com", "user:bob@example.com"] }, live)).toEqual({
        ...bi,
        members: ["user:amy@example.com", "user:bob@example.com"],
      });
      expect(B.observe({ ...bi, members: ["user:amy@example.com"] }, live)).toEqual({
        ...bi,
        members: ["user:AMY@example.com", "user:bob@example.com"],
      });
    });

    it("binding: matches on the condition; absent is undefined; an empty binding holds `members: []`", () => {
      expect(B.observe({ ...bi, condition: CANON_COND, members: [] }, live)).toEqual({
        ...bi,
        condition: CANON_COND,
        members: ["user:cond@example.com"],
      });
      expect(B.observe({ ...bi, role: "roles/none" }, live)).toBeUndefined();
      expect(B.observe({ ...bi, role: "roles/empty", members: [] }, live)).toEqual({
        ...bi,
        role: "roles/empty",
        members: [],
      });
      expect(B.observe({ ...bi, role: "roles/empty" }, live)).toBeUndefined();
    });

    it("member: present by canonical identity, keeping the configured spelling", () => {
      const configured = { ...mi, member: "user:Amy@Example.COM" };
      expect(M.observe(configured, live)).toBe(configured);
      expect(M.observe({ ...mi, member: "user:nobody@example.com" }, live)).toBeUndefined();
      expect(M.observe({ ...mi, member: "user:cond@example.com" }, live)).toBeUndefined();
      expect(M.observe({ ...mi, member: "user:cond@example.com", condition: CANON_COND }, live)).toEqual({
        ...mi,
        member: "user:cond@example.com",
        condition: CANON_COND,
      });
    });
  });

  describe("modifications", () => {
    it("binding: create sets; update sets again; a moved binding removes the old one first; delete removes", () => {
      expect(B.modifications(undefined, bi)).toEqual([
        { kind: "setBinding", role: "roles/a.b", members: ["user:a@example.com"] },
      ]);
      expect(B.modifications(bi, { ...bi, members: [] })).toEqual([
        { kind: "setBinding", role: "roles/a.b", members: [] },
      ]);
      expect(B.modifications(bi, { ...bi, condition: CANON_COND })).toEqual([
        { kind: "removeBinding", role: "roles/a.b" },
        { kind: "setBinding", role: "roles/a.b", condition: CANON_COND, members: ["user:a@example.com"] },
      ]);
      expect(B.modifications(bi, undefined)).toEqual([{ kind: "removeBinding", role: "roles/a.b" }]);
    });

    it("member: create adds; the same member in another spelling adds only; another member replaces", () => {
      expect(M.modifications(undefined, mi)).toEqual([
        { kind: "addMember", role: "roles/a.b", member: "user:a@example.com" },
      ]);
      expect(M.modifications(mi, { ...mi, member: "user:A@example.com" })).toEqual([
        { kind: "addMember", role: "roles/a.b", member: "user:A@example.com" },
      ]);
      expect(M.modifications(mi, { ...mi, member: "user:b@example.com" })).toEqual([
        { kind: "removeMember", role: "roles/a.b", member: "user:a@example.com" },
        { kind: "addMember", role: "roles/a.b", member: "user:b@example.com" },
      ]);
      expect(M.modifications({ ...mi, condition: CANON_COND }, undefined)).toEqual([
        { kind: "removeMember", role: "roles/a.b", condition: CANON_COND, member: "user:a@example.com" },
      ]);
    });
  });

  describe("parseImportId", () => {
    it("binding: {name} {role} [condition title], short or full name, title with spaces kept", () => {
      expect(B.parseImportId(`${N} roles/a.b`, {})).toEqual({ name: N, role: "roles/a.b" });
      expect(B.parseImportId("obj roles/a.b", DEFAULTS)).toEqual({ name: N, role: "roles/a.b" });
      expect(B.parseImportId(`${N} roles/a.b until  2030`, {})).toEqual({
        name: N,
        role: "roles/a.b",
        conditionTitle: "until  2030",
      });
    });

    it("member: {name} {role} {member} [condition title]", () => {
      expect(M.parseImportId(`${N} roles/a.b user:a@example.com`, {})).toEqual({
        name: N,
        role: "roles/a.b",
        member: "user:a@example.com",
      });
      expect(M.parseImportId("eu/obj roles/a.b user:a@example.com until 2030", DEFAULTS)).toEqual({
        name: full("obj", "eu"),
        role: "roles/a.b",
        member: "user:a@example.com",
        conditionTitle: "until 2030",
      });
    });

    it("malformed IDs say the expected form", () => {
      expect(B.parseImportId(N, {})).toBe(`import ID "${N}" is malformed; expected "{name} {role} [condition title]"`);
      expect(B.parseImportId("", {})).toEqual(expect.stringContaining("is malformed"));
      expect(B.parseImportId(`${N} viewer`, {})).toEqual(expect.stringContaining("{name} {role} [condition title]"));
      expect(B.parseImportId("a/b/c roles/a.b", DEFAULTS)).toEqual(expect.stringContaining("is not a valid"));
      expect(M.parseImportId(`${N} roles/a.b`, {})).toBe(
        `import ID "${N} roles/a.b" is malformed; expected "{name} {role} {member} [condition title]"`,
      );
      expect(M.parseImportId(`${N} roles/a.b alice@example.com`, {})).toEqual(
        expect.stringContaining("{name} {role} {member} [condition title]"),
      );
      expect(M.parseImportId("obj roles/a.b user:a@example.com", {})).toEqual(
        expect.stringContaining("provider.project is not set"),
      );
    });
  });

  describe("adopt", () => {
    const live: Policy = {
      bindings: [
        { role: "roles/a.b", members: ["user:B@example.com", "user:a@example.com"] },
        { role: "roles/a.b", members: ["user:c@example.com"], condition: { ...COND, description: "" } },
        { role: "roles/dup", members: ["user:x@example.com"], condition: { title: "t", expression: "true" } },
        { role: "roles/dup", members: ["user:y@example.com"], condition: { title: "t", expression: "false" } },
      ],
    };

    it("binding: the live members, normalised; the condition by title", () => {
      expect(B.adopt({ name: N, role: "roles/a.b" }, live)).toEqual({
        name: N,
        role: "roles/a.b",
        members: ["user:a@example.com", "user:B@example.com"],
      });
      expect(B.adopt({ name: N, role: "roles/a.b", conditionTitle: COND.title }, live)).toEqual({
        name: N,
        role: "roles/a.b",
        condition: CANON_COND,
        members: ["user:c@example.com"],
      });
    });

    it("member: the live spelling of the member", () => {
      expect(M.adopt({ name: N, role: "roles/a.b", member: "user:b@example.com" }, live)).toEqual({
        name: N,
        role: "roles/a.b",
        member: "user:B@example.com",
      });
    });

    it("says why when nothing or several bindings match, or the member is not there", () => {
      expect(B.adopt({ name: N, role: "roles/none" }, live)).toBe(`no binding for roles/none (unconditional) on ${N}`);
      expect(B.adopt({ name: N, role: "roles/dup", conditionTitle: "t" }, live)).toEqual(
        expect.stringContaining("2 bindings match"),
      );
      expect(M.adopt({ name: N, role: "roles/a.b", member: "user:zz@example.com" }, live)).toBe(
        `user:zz@example.com is not a member of roles/a.b (unconditional) on ${N}`,
      );
    });
  });
});
