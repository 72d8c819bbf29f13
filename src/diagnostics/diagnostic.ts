// User errors are data: collected, reported together, never thrown.
import type { PlanDiagnostic } from "../generated/schemas.js";

/** A diagnostic (schemas/plan.schema.json#/definitions/PlanDiagnostic): file:line:column, the
 * document path and the resource address, when known. */
export type Diagnostic = PlanDiagnostic;
export type Severity = Diagnostic["severity"];

export function hasErrors(diags: readonly Diagnostic[]): boolean {
  return diags.some((d) => d.severity === "error");
}

export function error(summary: string, extra: Omit<Diagnostic, "severity" | "summary"> = {}): Diagnostic {
  return { severity: "error", summary, ...extra };
}

export function warning(summary: string, extra: Omit<Diagnostic, "severity" | "summary"> = {}): Diagnostic {
  return { severity: "warning", summary, ...extra };
}

/**
 * An error the user can act on, raised outside stack loading (state, locks, cloud calls).
 * The CLI prints its diagnostics without a stack trace; anything else that is thrown is a bug.
 */
export class UserError extends Error {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic | Diagnostic[]) {
    const list = Array.isArray(diagnostics) ? diagnostics : [diagnostics];
    super(list.map((d) => d.summary).join("; "));
    this.name = "UserError";
    this.diagnostics = list;
  }
}
