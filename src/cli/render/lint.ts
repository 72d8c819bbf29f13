// Lint findings among a plan's diagnostics: listed by the Markdown view, counted by the access summary.
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import { isLintDiagnostic } from "../../config/lint.js";

export function lintOf(diags: readonly Diagnostic[]): Diagnostic[] {
  return diags.filter(isLintDiagnostic);
}

/** Lint warnings among diagnostics (counted in the access summary). */
export function lintWarningCount(diags: readonly Diagnostic[]): number {
  return diags.filter((d) => d.severity === "warning" && isLintDiagnostic(d)).length;
}
