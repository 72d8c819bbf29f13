// `details` at the approval prompt (policyDiffLines): a condition reworded (another description or
// title, the same expression) is one binding whose condition changed, not a grant and a revoke of
// the same members.
import { describe, expect, it } from "vitest";
import { plainLine } from "../../src/diagnostics/lines.js";
import { policyDiffLines } from "../../src/cli/render/policy-diff.js";
import type { PlannedPolicy } from "../../src/plan/access.js";
import type { Binding } from "../../src/generated/schemas.js";

const EXPR = 'request.time < timestamp("2027-01-01T00:00:00Z")';
const binding = (description: string, members: string[], title = "until 2027"): Binding => ({
  role: "roles/gkebackup.viewer",
  members,
  condition: { title, description, expression: EXPR },
});
const planned = (before: Binding[], after: Binding[]): PlannedPolicy => ({
  kind: "restorePlan",
  name: "projects/p/locations/l/restorePlans/n",
  before: { bindings: before },
  after: { bindings: after },
  byBinding: new Map(),
  byMember: new Map(),
});
const text = (p: PlannedPolicy) => policyDiffLines([p]).map(plainLine);

describe("details of a reworded condition", () => {
  it("shows the description's change, and the members as kept", () => {
    const out = text(
      planned([binding("old words", ["user:a@example.com"])], [binding("new words", ["user:a@example.com"])]),
    );
    expect(out).toContain('      roles/gkebackup.viewer if "until 2027"');
    expect(out).toContain('        ~ condition description "old words" → "new words" (same expression)');
    expect(out).toContain("          user:a@example.com");
    expect(out.filter((l) => /^\s+[+-] user:/.test(l))).toEqual([]);
  });

  it("a new title with a member added: the title's change, then only the member gained", () => {
    const out = text(
      planned(
        [binding("d", ["user:a@example.com"])],
        [binding("d", ["user:a@example.com", "user:b@example.com"], "until next year")],
      ),
    );
    expect(out).toContain('        ~ condition title "until 2027" → "until next year" (same expression)');
    expect(out.filter((l) => /^\s+[+-] /.test(l))).toEqual(["        + user:b@example.com"]);
  });

  it("flags a member the plan says looks like another principal", () => {
    const p = planned([], [binding("d", ["user:\u0430lice@example.com"])]);
    const flag = {
      principal: "user:\u0430lice@example.com",
      reasons: ["characters beyond ASCII"],
      code_points: ["U+0430 CYRILLIC SMALL LETTER A"],
    };
    const out = policyDiffLines([p], [flag]).map(plainLine);
    const at = out.indexOf("        + user:\u0430lice@example.com");
    expect(out[at + 1]).toContain(
      "! looks like another principal (characters beyond ASCII): U+0430 CYRILLIC SMALL LETTER A",
    );
  });
});
