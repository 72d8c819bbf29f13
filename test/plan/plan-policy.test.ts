// Issue 14: a conftest-style policy written against Terraform's documented plan JSON fields works
// unchanged on converge's `plan --json` (evaluated by test/support/rego-lite.ts, a small
// evaluator for the Rego such policies are written in).
import { describe, expect, it } from "vitest";
import { plan } from "../../src/plan/planner.js";
import { toTerraformPlanJson } from "../../src/plan/terraform-json.js";
import { BINDING, EP, fakeCloud, MEMBER, planOptions, RP, STACK_HEAD, stackOf } from "../fixtures/builders.js";
import { evaluate } from "../support/rego-lite.js";

// As one writes it for Terraform's Google provider (google_*_iam_binding has `members`).
const POLICY = `
package main

deny[msg] {
  rc := input.resource_changes[_]
  member := rc.change.after.members[_]
  member == "allUsers"
  msg := sprintf("%s grants %s to allUsers", [rc.address, rc.change.after.role])
}

warn[msg] {
  rc := input.resource_changes[_]
  rc.change.actions[_] == "delete"
  msg := sprintf("%s will be deleted", [rc.address])
}
`;

async function planJson(resources: string): Promise<unknown> {
  const cloud = fakeCloud({ policies: { [RP]: { etag: "E1", bindings: [] }, [EP]: { etag: "E2", bindings: [] } } });
  const p = (await plan(stackOf(`${STACK_HEAD}resources:\n${resources}`), undefined, cloud.port, planOptions())).plan;
  return JSON.parse(JSON.stringify(toTerraformPlanJson(p)));
}

describe("a conftest policy over Terraform's plan JSON, on converge's plan JSON", () => {
  it("denies a binding that grants allUsers, naming the resource and the role", async () => {
    const json = await planJson(`  public:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:a@x.com, allUsers] }
  private:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.admin, members: [user:a@x.com] }
`);
    expect(evaluate(POLICY, json)).toEqual({ deny: ["public grants roles/gkebackup.viewer to allUsers"], warn: [] });
  });

  it(
    "passes a plan without allUsers (a member resource has no " + "members list: the rule is undefined for it)",
    async () => {
      const json = await planJson(`  private:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.admin, members: [user:a@x.com, allAuthenticatedUsers] }
  invoker:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: allUsers }
`);
      expect(evaluate(POLICY, json).deny).toEqual([]);
    },
  );
});

describe("rego-lite", () => {
  it("iterates with [_], compares, formats, and treats what is missing as undefined", () => {
    const input = {
      resource_changes: [
        { address: "x", change: { actions: ["create", "delete"], after: { members: ["a", "allUsers"], role: "r" } } },
        { address: "y", change: { actions: ["update"] } },
      ],
    };
    expect(evaluate(POLICY, input)).toEqual({ deny: ["x grants r to allUsers"], warn: ["x will be deleted"] });
    expect(evaluate('ok[v] {\n  v := input.a["b c"][1]\n  v != 2\n}', { a: { "b c": [1, 3] } })).toEqual({ ok: [3] });
    expect(() => evaluate("bad[x] {\n  x := nope.y\n}", {})).toThrow(/unbound variable nope/);
  });
});
