// Issue 43, item 2: the Markdown comment points to the review page and stays within GitHub's
// comment size limit (65,536 characters); over it, it summarises and says what it left out,
// revocations kept before grants.
import { describe, expect, it } from "vitest";
import type { AccessChange, Plan } from "../../src/generated/schemas.js";
import { planMarkdown } from "../../src/cli/render/markdown.js";
import { quickstartPlan } from "./plans.js";

const GITHUB_COMMENT_MAX = 65_536;

/** The quickstart plan with `grants` more grants and `revokes` more revocations in its access delta. */
async function hugePlan(grants: number, revokes: number): Promise<Plan> {
  const plan = await quickstartPlan();
  const base = plan.access_changes!.changes[0]!;
  const more = (n: number, action: AccessChange["action"]) =>
    Array.from({ length: n }, (_, i): AccessChange => ({
      ...base,
      principal: `user:${action}-${i}@example.com`,
      action,
    }));
  const delta = plan.access_changes!;
  delta.changes = [...more(revokes, "revoke"), ...delta.changes, ...more(grants, "grant")];
  return plan;
}

describe("the Markdown comment's size", () => {
  it("mentions the review page and keeps a small plan whole", async () => {
    const md = planMarkdown(await quickstartPlan(), []);
    expect(md).toContain("--format html");
    expect(md).toContain("<summary>Full plan</summary>");
    expect(md).not.toContain("left out");
  });

  it("summarises a plan over GitHub's limit, revocations first, and says what it cut", async () => {
    const plan = await hugePlan(4000, 300);
    const md = planMarkdown(plan, []);
    expect(md.length).toBeLessThanOrEqual(GITHUB_COMMENT_MAX);
    expect(md).not.toContain("<summary>Full plan</summary>");
    expect(md).toMatch(/The full plan is left out/);
    for (let i = 0; i < 300; i++) expect(md).toContain(`user:revoke-${i}@example.com`);
    const shown = plan.access_changes!.changes.filter((c) => md.includes(`\`${c.principal}\``)).length;
    const cut = plan.access_changes!.changes.length - shown;
    expect(cut).toBeGreaterThan(0);
    expect(md).toContain(`${cut} more access changes are left out (0 revocations, ${cut} grants)`);
    expect(md).toContain("--format html");
  });
});

describe("the Markdown comment's size, whatever makes it long", () => {
  it("lists 50 guardrail results and lint findings of a summarised comment and counts the rest", async () => {
    const plan = await hugePlan(0, 0);
    const r = {
      rule: "no-public",
      enforcement: "advisory" as const,
      change: "grant" as const,
      role: "roles/r",
      object: "projects/p/o",
      resource: "restoreViewers",
    };
    const results = Array.from({ length: 3000 }, (_, i) => ({ ...r, principal: `user:flagged-${i}@example.com` }));
    const rules = [{ id: "no-public", description: "d", enforcement: "advisory" as const }];
    plan.guardrails = { rules_digest: "x", rules, results };
    const lint = Array.from({ length: 3000 }, (_, i) => ({
      severity: "warning" as const,
      summary: `finding ${i} ${"x".repeat(40)}`,
    }));
    const md = planMarkdown(plan, lint);
    expect(md.length).toBeLessThanOrEqual(GITHUB_COMMENT_MAX);
    expect(md).toContain("2950 more guardrail results are left out");
    expect(md).toContain("2950 more lint findings are left out");
  });

  it("cuts at a line, saying so, when even the summary is too long", async () => {
    const plan = await quickstartPlan();
    plan.target = "t".repeat(70_000);
    const md = planMarkdown(plan, []);
    expect(md.length).toBeLessThanOrEqual(GITHUB_COMMENT_MAX);
    const note = "_The comment is cut here: it would exceed GitHub's limit. The review page shows the whole plan._\n";
    expect(md.endsWith(note)).toBe(true);
  });
});
