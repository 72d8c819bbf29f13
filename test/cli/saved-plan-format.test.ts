// A saved plan holds converge's own plan format (format_version); one saved by a converge that
// wrote another format is refused by name, never as "not a converge plan" or half-read.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSavedPlan } from "../../src/cli/commands/saved-plan-file.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { PLAN_FORMAT } from "../../src/base/version.js";

function refusal(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "converge-plan-format-")), "old.plan");
  writeFileSync(file, text);
  try {
    readSavedPlan(file, undefined);
  } catch (e) {
    if (e instanceof UserError) return `${e.diagnostics.map((d) => `${d.summary}\n${d.detail ?? ""}`).join("\n")}`;
    throw e;
  }
  throw new Error("the plan was accepted");
}

describe("a saved plan in another plan format", () => {
  it("is refused by its format, saying which converge saved it and that nothing was applied", () => {
    const old = {
      format_version: "1.2",
      converge_version: "0.9.0",
      resource_changes: [{ change: { actions: ["create"] } }],
    };
    const text = refusal(JSON.stringify(old));
    expect(text).toContain(
      `was saved in plan format "1.2" (converge "0.9.0"); this converge reads format "${PLAN_FORMAT}"`,
    );
    expect(text).toContain("Nothing was applied.");
    expect(text).not.toContain("is not a converge plan");
  });

  it("quotes a long or hostile format value bounded", () => {
    const text = refusal(JSON.stringify({ format_version: "x".repeat(10_000) + "\u001b[2J" }));
    expect(text.length).toBeLessThan(600);
    expect(text).not.toContain("\u001b");
  });
});
