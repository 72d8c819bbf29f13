// A `moved:` entry whose source and target the state both holds is an error, as in Terraform:
// converge cannot tell which one is the resource, and planning the source as an orphan would
// revoke a grant the reviewer meant to keep. Nothing is planned.
import { describe, expect, it } from "vitest";
import type { Policy, State } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { RP, fakeCloud, makeState, planOptions, STACK_HEAD, stackOf } from "../fixtures/builders.js";

const RP_MEMBER = "cloudnative:backup/v1:RestorePlanIamMember";
const ADMIN = "roles/gkebackup.admin";
const memberYaml = (address: string, member: string) =>
  `  ${address}:\n    type: ${RP_MEMBER}\n    properties:\n      name: ` +
  `nightly\n      role: ${ADMIN}\n      member: ${member}\n`;

function held(address: string, member: string): State["resources"][number] {
  const inputs = { name: RP, role: ADMIN, member };
  const id = `${RP} ${ADMIN} ${member}`;
  return {
    address,
    type: RP_MEMBER,
    id,
    inputs,
    outputs: { ...inputs, etag: "AAAAAAAAAAE=", id, project: "my-project" },
    dependencies: [],
  };
}

const live: Policy = {
  version: 1,
  bindings: [{ role: ADMIN, members: ["user:a@example.com", "user:b@example.com"] }],
  etag: "AAAAAAAAAAE=",
};

describe("moved: onto an address the state already holds", () => {
  it("is an error at the entry's `to`, and nothing is planned", async () => {
    const text =
      `${STACK_HEAD}resources:\n` +
      `${memberYaml("new", "user:b@example.com")}moved:\n  - from: ` +
      `old\n    to: new\n`;
    const r = await plan(
      stackOf(text),
      makeState("t", [held("old", "user:a@example.com"), held("new", "user:b@example.com")]),
      fakeCloud({ policies: { [RP]: live } }).port,
      planOptions(),
    );
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => d.summary)).toEqual(["moved[0]: old cannot be moved to new: the state already holds new"]);
    expect(errors[0]!.line).toBeGreaterThan(0);
    expect(r.plan.errored).toBe(true);
  });
});
