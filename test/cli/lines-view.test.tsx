// The ink view prints the same lines as the plain renderer (with colour in a terminal).
import { stripVTControlCharacters } from "node:util";
import { render } from "ink-testing-library";
import { describe, expect, it } from "vitest";
import { toPlain } from "../../src/diagnostics/lines.js";
import { planLines } from "../../src/cli/render/plan-text.js";
import { LinesView } from "../../src/cli/views/lines-view.js";
import { mixedPlan, noChangesPlan, quickstartPlan } from "./plans.js";

function frame(lines: ReturnType<typeof planLines>): string[] {
  const r = render(<LinesView lines={lines} />);
  const out = stripVTControlCharacters(r.lastFrame() ?? "");
  r.unmount();
  return out.split("\n").map((l) => l.replace(/\s+$/, ""));
}

describe("LinesView", () => {
  it("renders the quickstart plan's key lines", async () => {
    const out = frame(planLines(await quickstartPlan()));
    expect(out).toContain("  # restoreViewers will be created");
    expect(out).toContain('  + resource "cloudnative:backup/v1:RestorePlanIamBinding" "restoreViewers" {');
    expect(out).toContain("      + etag    = (known after apply)");
    expect(out).toContain("Plan: 0 to import, 3 to add, 0 to change, 0 to destroy.");
  });

  it("prints the same characters as the plain renderer (for lines that fit the width)", async () => {
    for (const p of [await quickstartPlan(), await mixedPlan(), await noChangesPlan()]) {
      const lines = planLines(p);
      const plain = toPlain(lines)
        .split("\n")
        .filter((l) => l.length > 0 && l.length < 100);
      const out = frame(lines);
      for (const l of plain) expect(out).toContain(l);
    }
  });

  it("renders the drift section and the replacement markers", async () => {
    const out = frame(planLines(await mixedPlan()));
    expect(out[0]).toBe("Objects have changed outside of converge");
    expect(out).toContain('+/- resource "cloudnative:backup/v1:RestorePlanIamBinding" "admins" {');
    expect(out).toContain('          + "user:new@x.com",');
    expect(out).toContain('          - "user:old@x.com",');
  });

  it("keeps empty lines as blank rows", async () => {
    const lines = planLines(await noChangesPlan());
    const out = frame(lines);
    expect(out[0]).toBe("No changes. Your access policies match the stack.");
    expect(out[1]).toBe("");
    expect(out[2]).toMatch(/^converge compared the stack/);
  });
});
