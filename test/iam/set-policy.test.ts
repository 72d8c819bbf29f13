import { describe, expect, it } from "vitest";
import {
  applyModifications,
  canonicalAuditConfigs,
  editsAuditConfigs,
  type PolicyModification,
} from "../../src/iam/policy.js";
import type { Policy } from "../../src/generated/schemas.js";

const live: Policy = {
  version: 1,
  etag: "e1",
  bindings: [
    { role: "roles/viewer", members: ["user:a@example.com", "user:b@example.com"] },
    { role: "roles/editor", members: ["group:ops@example.com"] },
  ],
  auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" }] }],
};

const setPolicy = (
  bindings: Policy["bindings"],
  auditConfigs: NonNullable<Policy["auditConfigs"]> = [],
): PolicyModification => ({ kind: "setPolicy", bindings: bindings ?? [], auditConfigs });

describe("setPolicy: a whole-policy edit", () => {
  it("replaces every binding and the audit configs", () => {
    const { policy, changed } = applyModifications(live, [
      setPolicy([{ role: "roles/owner", members: ["user:c@example.com"] }]),
    ]);
    expect(changed).toBe(true);
    expect(policy.bindings).toEqual([{ role: "roles/owner", members: ["user:c@example.com"] }]);
    expect(policy.auditConfigs).toBeUndefined();
    expect(policy.etag).toBe("e1");
  });

  it("is unchanged when the live policy already is the desired one (member case, order and duplicates aside)", () => {
    const same = setPolicy(
      [
        { role: "roles/editor", members: ["group:OPS@example.com"] },
        { role: "roles/viewer", members: ["user:b@example.com"] },
        { role: "roles/viewer", members: ["user:a@example.com", "user:b@example.com"] },
      ],
      [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ", exemptedMembers: [] }] }],
    );
    expect(applyModifications(live, [same]).changed).toBe(false);
  });

  it("a changed audit config alone is a change", () => {
    const { changed, policy } = applyModifications(live, [
      setPolicy(live.bindings, [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_WRITE" }] }]),
    ]);
    expect(changed).toBe(true);
    expect(policy.auditConfigs).toEqual([{ service: "allServices", auditLogConfigs: [{ logType: "DATA_WRITE" }] }]);
  });

  it("an empty whole policy (a destroy) leaves no binding and no audit config", () => {
    const { policy, changed } = applyModifications(live, [setPolicy([])]);
    expect(changed).toBe(true);
    expect(policy.bindings).toEqual([]);
    expect(policy.auditConfigs).toBeUndefined();
  });

  it("runs before binding edits of the same write, which then apply on top of it", () => {
    const mods: PolicyModification[] = [
      { kind: "addMember", role: "roles/owner", member: "user:d@example.com" },
      setPolicy([{ role: "roles/owner", members: ["user:c@example.com"] }]),
    ];
    expect(applyModifications(live, mods).policy.bindings).toEqual([
      { role: "roles/owner", members: ["user:c@example.com", "user:d@example.com"] },
    ]);
  });

  it("a conditional binding raises the version to 3", () => {
    const cond = { title: "t", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" };
    expect(
      applyModifications(live, [
        setPolicy([{ role: "roles/viewer", members: ["user:a@example.com"], condition: cond }]),
      ]).policy.version,
    ).toBe(3);
  });

  it("only a whole-policy edit asks for the audit configs in the write's mask", () => {
    expect(editsAuditConfigs([setPolicy([])])).toBe(true);
    expect(editsAuditConfigs([{ kind: "setBinding", role: "roles/viewer", members: [] }])).toBe(false);
  });

  it("canonical audit configs compare services, log types and exemptions by identity", () => {
    const a = canonicalAuditConfigs([
      {
        service: "b",
        auditLogConfigs: [
          { logType: "DATA_WRITE" },
          { logType: "ADMIN_READ", exemptedMembers: ["user:X@example.com"] },
        ],
      },
      { service: "a" },
    ]);
    const b = canonicalAuditConfigs([
      { service: "a", auditLogConfigs: [] },
      {
        service: "b",
        auditLogConfigs: [
          { logType: "ADMIN_READ", exemptedMembers: ["user:x@example.com"] },
          { logType: "DATA_WRITE" },
        ],
      },
    ]);
    expect(a).toEqual(b);
  });
});
