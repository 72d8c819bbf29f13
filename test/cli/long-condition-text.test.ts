// Issue 47, item 3: a very long condition title or description is shortened in the summaries (the
// access summary under the plan and at the prompt, the Markdown comment), so they stay readable;
// the plan's diff and the access view show it whole.
import { describe, expect, it } from "vitest";
import type { ConditionChange, Plan } from "../../src/generated/schemas.js";
import { accessSummaryLines, rewordingText, shortText, SUMMARY_TEXT_MAX } from "../../src/cli/render/access-summary.js";
import { accessLines } from "../../src/cli/render/access-text.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { planMarkdown } from "../../src/cli/render/markdown.js";
import { planLines } from "../../src/cli/render/plan-text.js";
import { quickstartPlan } from "./plans.js";

const LONG = `Temporary access for the on-call rotation ${"and then some more words ".repeat(20)}end`;

/** The quickstart plan with the conditional grant's title made LONG, in its diff and its delta. */
async function longTitlePlan(): Promise<Plan> {
  const plan = await quickstartPlan();
  const text = JSON.stringify(plan).replaceAll('"until-2027"', JSON.stringify(LONG));
  return JSON.parse(text) as Plan;
}

describe("long condition titles and descriptions", () => {
  it("shortText cuts past SUMMARY_TEXT_MAX characters with an ellipsis, by code point", () => {
    expect(shortText("short")).toBe("short");
    const cut = shortText(LONG);
    expect(Array.from(cut)).toHaveLength(SUMMARY_TEXT_MAX);
    expect(cut.endsWith("…")).toBe(true);
    expect(shortText("😀".repeat(100))).toBe(`${"😀".repeat(SUMMARY_TEXT_MAX - 1)}…`);
  });

  it("the summary and the Markdown show the title shortened; the diff and the access view whole", async () => {
    const plan = await longTitlePlan();
    const summary = toPlain(accessSummaryLines(plan));
    expect(summary).toContain(`if "${shortText(LONG)}"`);
    expect(summary).not.toContain(LONG);
    const md = planMarkdown(plan, []);
    const [page, full] = md.split("<details>") as [string, string];
    expect(page).not.toContain("and then some more words and then some more words and then");
    expect(full).toContain(LONG);
    expect(toPlain(planLines(plan))).toContain(`title       = ${JSON.stringify(LONG)}`);
    expect(toPlain(accessLines(plan.access_changes))).toContain(`if "${LONG}"`);
  });

  it("a reworded condition: shortened, unless the two differ only past the cut", () => {
    const c: ConditionChange = {
      object: "o",
      kind: "restorePlan",
      role: "roles/x",
      principals: ["user:a@example.com"],
      addresses: ["a"],
      before: { title: "t", description: LONG, expression: "true" },
      after: { title: "t", description: "Reviewed", expression: "true" },
    };
    expect(rewordingText(c)).toContain(`description ${JSON.stringify(shortText(LONG))} → "Reviewed"`);
    expect(rewordingText(c, false)).toContain(JSON.stringify(LONG));
    const late = { ...c, after: { ...c.after, description: `${LONG} (edited)` } };
    expect(rewordingText(late)).toContain(`${JSON.stringify(LONG)} → ${JSON.stringify(`${LONG} (edited)`)}`);
  });
});
