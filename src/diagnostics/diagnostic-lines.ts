import type { Diagnostic } from "./diagnostic.js";
import { type Line, seg } from "./lines.js";
import { relative } from "node:path";
import { counted } from "./listed.js";

/** Diagnostics as `file:line:column: Error: summary` blocks, Terraform style. */
export function diagnosticLines(diags: readonly Diagnostic[], cwd = process.cwd()): Line[] {
  const lines: Line[] = [];
  for (const d of diags) {
    const where = d.file ? `${relative(cwd, d.file) || d.file}${d.line ? `:${d.line}:${d.column ?? 1}` : ""}: ` : "";
    const label = d.severity === "error" ? "Error" : "Warning";
    lines.push([seg(where), seg(`${label}: `, d.severity === "error" ? "error" : "warning"), seg(d.summary, "bold")]);
    if (d.path) lines.push([seg(`  at ${d.path}${d.address ? ` (resource ${d.address})` : ""}`, "dim")]);
    else if (d.address) lines.push([seg(`  resource ${d.address}`, "dim")]);
    if (d.detail) for (const l of d.detail.split("\n")) lines.push([seg(`  ${l}`)]);
  }
  const errors = diags.filter((d) => d.severity === "error").length;
  const warnings = diags.length - errors;
  // Counted only when errors are among them: "0 errors" over warnings read as a clean bill of
  // health, and an error of a later step (a read of the cloud) could still follow.
  if (errors > 0 && diags.length > 1)
    lines.push([seg(`${counted(errors, "error")}, ${counted(warnings, "warning")}.`, "bold")]);
  return lines;
}
