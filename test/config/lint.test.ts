import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadStackFile } from "../../src/config/load.js";
import { isLintDiagnostic } from "../../src/config/lint.js";
import { LINT_RULES, lintExpression } from "../../src/config/lint-rules.js";

const dir = join(import.meta.dirname, "../fixtures/lint");
const now = new Date("2026-11-22T00:00:00Z");
const ERRORS = new Set(["conditional-basic-or-public", "invalid-condition"]);

describe("isLintDiagnostic", () => {
  it("decides by the code, not by the text", () => {
    expect(
      isLintDiagnostic({ severity: "warning", code: "lint/basic-role", summary: "a finding", detail: "no tag here" }),
    ).toBe(true);
    expect(isLintDiagnostic({ severity: "warning", code: "lint/public-principal", summary: "a finding" })).toBe(true);
    expect(
      isLintDiagnostic({ severity: "warning", summary: "looks like one", detail: "quoted text [lint: basic-role]" }),
    ).toBe(false);
    expect(
      isLintDiagnostic({ severity: "warning", code: "state/conflict", summary: "x", detail: "[lint: basic-role]" }),
    ).toBe(false);
  });
});

describe("policy lint", () => {
  for (const rule of Object.keys(LINT_RULES)) {
    it(`${rule}: the bad fixture triggers it with a position, the good one does not`, () => {
      const bad = loadStackFile(join(dir, `${rule}-bad.yaml`), { now });
      const hit = bad.diagnostics.filter((d) => d.code === `lint/${rule}`);
      expect(hit.length).toBeGreaterThan(0);
      for (const d of hit) {
        expect(isLintDiagnostic(d)).toBe(true);
        // The tag stays in the text for people; programs go by the code.
        expect(d.detail).toMatch(new RegExp(`\\[lint: ${rule}\\]$`));
        expect(d.line).toBeGreaterThan(0);
        expect(d.column).toBeGreaterThan(0);
        expect(d.path).toMatch(/^resources\.grant\.properties/);
        expect(d.severity).toBe(ERRORS.has(rule) ? "error" : "warning");
      }
      // A warning does not stop loading; an error does.
      expect(bad.stack === undefined).toBe(ERRORS.has(rule));
      const good = loadStackFile(join(dir, `${rule}-good.yaml`), { now });
      expect(
        good.diagnostics.filter((d) => d.code === `lint/${rule}` || d.detail?.includes(`[lint: ${rule}]`)),
      ).toEqual([]);
      expect(good.stack).toBeDefined();
    });
  }

  it("has a fixture pair for every rule", () => {
    const files = readdirSync(dir);
    for (const rule of Object.keys(LINT_RULES)) {
      expect(files).toContain(`${rule}-bad.yaml`);
      expect(files).toContain(`${rule}-good.yaml`);
    }
  });

  it("--strict turns warnings into errors (and stops loading)", () => {
    const r = loadStackFile(join(dir, "basic-role-bad.yaml"), { now, strict: true });
    expect(r.stack).toBeUndefined();
    expect(r.diagnostics.map((d) => d.severity)).toContain("error");
  });

  it("a rule turned off in the stack's lint section finds nothing", () => {
    const r = loadStackFile(join(dir, "public-principal-off.yaml"), { now });
    expect(r.diagnostics).toEqual([]);
    expect(r.stack).toBeDefined();
  });

  it("points at the position inside the CEL expression", () => {
    const r = loadStackFile(join(dir, "invalid-condition-bad.yaml"), { now });
    const d = r.diagnostics.find((x) => x.detail?.includes("[lint: invalid-condition]"))!;
    expect(d.line).toBe(10);
    // The expression scalar starts after `expression: "`; the error is past its start.
    expect(d.column).toBeGreaterThan(50);
  });

  it("checks CEL roots, attributes and macros as Google does", () => {
    expect(lintExpression('resource.name.startsWith("projects/x")', now)).toEqual([]);
    expect(lintExpression('"accessPolicies/1/accessLevels/CorpNet" in request.auth.access_levels', now)).toEqual([]);
    // Google's attribute reference has no request.auth.claims, and IAM refuses macros (exists, all…).
    expect(lintExpression('request.auth.claims.groups.exists(g, g == "a")', now).map((f) => f.rule)).toEqual([
      "invalid-condition",
    ]);
    expect(lintExpression('request.auth.access_levels.exists(g, g == "a")', now).map((f) => f.rule)).toEqual([
      "invalid-condition",
    ]);
    expect(lintExpression('reqest.time < timestamp("2099-01-01T00:00:00Z")', now).map((f) => f.rule)).toEqual([
      "invalid-condition",
    ]);
    expect(lintExpression('request.time < timestamp("2020-01-01T00:00:00Z")', now).map((f) => f.rule)).toEqual([
      "expired-condition",
    ]);
  });
});
