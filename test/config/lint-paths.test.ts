// Load-time lint builds a value's path only when a finding names it (src/config/lint.ts
// LiteralVal): every finding must still name the path, line and column of the value it is about,
// in a binding resource, a member resource and each binding of a policy resource.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";

const STACK = `name: s
provider:
  project: p
  location: us-central1
resources:
  b:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: rp-1
      role: roles/owner
      members: [user:a@example.com, allUsers, deleted:user:x@example.com?uid=1, user:A@example.com]
  m:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties:
      name: rp-2
      role: roles/x
      member: allAuthenticatedUsers
  e:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: rp-3
      role: roles/y
      members: []
  p:
    type: cloudnative:backup/v1:RestorePlanIamPolicy
    properties:
      name: rp-4
      bindings:
        - role: roles/viewer
          members:
            - group:g@example.com
            - group:G@example.com
        - role: roles/z
          members: [user:b@example.com]
          condition:
            title: old
            expression: request.time < timestamp("2020-01-01T00:00:00Z")
`;

describe("load-time lint paths", () => {
  it("name each finding's value", () => {
    const r = parseStack("/virtual/stack.yaml", STACK, { now: new Date("2026-01-01T00:00:00Z") });
    const found = r.diagnostics.map((d) => `${d.code} ${d.path} ${d.line}:${d.column}`);
    expect(found).toEqual([
      "lint/public-principal resources.b.properties.members[1] 11:37",
      "lint/deleted-principal resources.b.properties.members[2] 11:47",
      "lint/basic-role resources.b.properties.role 10:13",
      "lint/duplicate-member resources.b.properties.members[3] 11:81",
      "lint/public-principal resources.m.properties.member 17:15",
      "lint/empty-binding resources.e.properties.members 23:16",
      "lint/basic-role resources.p.properties.bindings[0].role 29:17",
      "lint/duplicate-member resources.p.properties.bindings[0].members[1] 32:15",
      "lint/expired-condition resources.p.properties.bindings[1].condition.expression 37:25",
    ]);
  });
});
