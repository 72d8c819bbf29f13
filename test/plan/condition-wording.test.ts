// Google's identity of a binding is its role and its whole condition (title, description,
// expression). A condition whose description (or title) was edited out of band, or in the stack,
// is another binding: the plan removes one and adds the other. But a member moved between two
// bindings of one role with the same expression keeps exactly the access it had: the access delta
// does not count it as revoked and granted; it lists a condition change instead (the plan JSON's
// access_changes.condition_changes), and the summary, the access view and Markdown say so.
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { accessSummaryLines } from "../../src/cli/render/access-summary.js";
import { accessLines } from "../../src/cli/render/access-text.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { planMarkdown } from "../../src/cli/render/markdown.js";
import { validate } from "../../src/schemas/index.js";
import { planDifferences } from "../../src/plan/plan-differences.js";
import {
  bindingState,
  fakeCloud,
  makeState,
  planOptions,
  RP,
  rpName,
  STACK_HEAD,
  stackOf,
} from "../fixtures/builders.js";

const RP_POLICY = "cloudnative:backup/v1:RestorePlanIamPolicy";
const RP_BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
const WEEKLY = rpName("weekly");
const EXPR = 'request.time < timestamp("2031-01-01T00:00:00Z")';
const cond = (description: string, title = "until-2031") => ({ title, description, expression: EXPR });

async function wordingPlan(): Promise<Plan> {
  const text = `${STACK_HEAD}resources:
  whole:
    type: ${RP_POLICY}
    properties:
      name: weekly
      bindings:
        - role: roles/gkebackup.viewer
          members: ["user:a@example.com", "user:b@example.com"]
          condition: { title: until-2031, description: "Reviewed in 2030", expression: '${EXPR}' }
        - role: roles/gkebackup.admin
          members: ["user:c@example.com"]
          condition: { title: until-2031, description: "Reviewed in 2030", expression: '${EXPR}' }
  viewers:
    type: ${RP_BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: ["user:v@example.com"]
      condition: { title: renamed, description: "Temporary", expression: '${EXPR}' }
`;
  const state = makeState("t", [
    bindingState(
      "viewers",
      { name: RP, role: "roles/gkebackup.viewer", members: ["user:v@example.com"], condition: cond("Temporary") },
      "E1",
    ),
  ]);
  const cloud = fakeCloud({
    policies: {
      // Edited out of band: the description of the viewers' condition; the admin's expression too.
      [WEEKLY]: {
        version: 3,
        etag: "E3",
        bindings: [
          {
            role: "roles/gkebackup.viewer",
            members: ["user:a@example.com", "user:b@example.com"],
            condition: cond("edited by hand"),
          },
          {
            role: "roles/gkebackup.admin",
            members: ["user:c@example.com"],
            condition: { ...cond("Reviewed in 2030"), expression: "true" },
          },
        ],
      },
      [RP]: {
        version: 3,
        etag: "E1",
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:v@example.com"], condition: cond("Temporary") }],
      },
    },
  });
  return (await plan(stackOf(text), state, cloud.port, planOptions())).plan;
}

describe("a condition whose wording changes, its expression identical", () => {
  it("is a condition change, not a loss and a gain of access, in the plan JSON", async () => {
    const p = await wordingPlan();
    const rows = (p.access_changes?.changes ?? []).map(
      (c) => `${c.action} ${c.principal} ${c.role} ${c.condition?.expression}`,
    );
    // The admin's expression did change: that is access.
    expect(rows.sort()).toEqual([
      "grant user:c@example.com roles/gkebackup.admin " + EXPR,
      "revoke user:c@example.com roles/gkebackup.admin true",
    ]);
    expect(p.access_changes?.condition_changes).toEqual([
      {
        object: RP,
        kind: "restorePlan",
        role: "roles/gkebackup.viewer",
        principals: ["user:v@example.com"],
        before: cond("Temporary"),
        after: cond("Temporary", "renamed"),
        addresses: ["viewers"],
      },
      {
        object: WEEKLY,
        kind: "restorePlan",
        role: "roles/gkebackup.viewer",
        principals: ["user:a@example.com", "user:b@example.com"],
        before: cond("edited by hand"),
        after: cond("Reviewed in 2030"),
        addresses: ["whole"],
      },
    ]);
    expect(validate("plan.schema.json", JSON.parse(JSON.stringify(p)))).toEqual([]);
  });

  it("the summary, the access view and Markdown say the wording changes and who keeps access", async () => {
    const p = await wordingPlan();
    const summary = toPlain(accessSummaryLines(p));
    expect(summary).toContain("Access: 1 granted, 1 revoked\n");
    expect(summary).not.toMatch(/user:[ab]@example\.com loses/);
    expect(summary).toContain(
      `  ~ roles/gkebackup.viewer on ${WEEKLY}: condition "until-2031" description "edited by hand" → ` +
        `"Reviewed in 2030", same expression: user:a@example.com, user:b@example.com keep access (whole)\n`,
    );
    expect(summary).toContain(
      `  ~ roles/gkebackup.viewer on ${RP}: condition title "until-2031" → "renamed", same ` +
        `expression: user:v@example.com keeps access (viewers)\n`,
    );
    const view = toPlain(accessLines(p.access_changes));
    expect(view).toContain(
      `~ roles/gkebackup.viewer: condition "until-2031" description "edited by hand" → "Reviewed in 2030", ` +
        `same expression: user:a@example.com, user:b@example.com keep access  (whole)`,
    );
    expect(planMarkdown(p, [])).toContain("Conditions reworded (same expression, nobody gains or loses access)");
  });

  it("a saved plan whose condition changes differ from a fresh plan's is told", async () => {
    const p = await wordingPlan();
    const fresh: Plan = {
      ...p,
      access_changes: { ...p.access_changes!, condition_changes: p.access_changes!.condition_changes!.slice(1) },
    };
    expect(planDifferences(p, fresh)).toEqual([
      `the saved plan moves user:v@example.com from condition "until-2031" (${EXPR}) to condition "renamed" ` +
        `(${EXPR}) of roles/gkebackup.viewer on ${RP}; a fresh plan would not`,
    ]);
    expect(planDifferences(p, p)).toEqual([]);
  });
});
