// `plan --format markdown`: a pull-request comment with counts, the access delta, lint findings
// and the full plan in a collapsible block.
import type { Plan } from "../../generated/schemas.js";
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import { terminalText } from "../../diagnostics/terminal-text.js";
import { planCounts } from "../../plan/planner.js";
import { toPlain } from "./lines.js";
import { planLines } from "./plan-text.js";
import { rewordingText } from "./access-summary.js";

/** A table cell or inline text: one line, no control or bidi characters (a reviewer reads it as it is). */
const cell = (s: string) => terminalText(s).replace(/\|/g, "\\|");

export function planMarkdown(plan: Plan, lint: readonly Diagnostic[]): string {
  const n = planCounts(plan);
  const out: string[] = [];
  out.push(`## converge plan: \`${cell(plan.stack.name)}\``, "");
  if (plan.target) out.push(`Target: ${cell(plan.target)}`, "");
  out.push(plan.applyable ? `**${n.import} to import, ${n.add} to add, ${n.change} to change, ${n.destroy} to destroy.**` : "**No changes.** The access policies match the stack.", "");
  out.push("| Import | Add | Change | Destroy | Drift |", "|---:|---:|---:|---:|---:|", `| ${n.import} | ${n.add} | ${n.change} | ${n.destroy} | ${plan.resource_drift.length} |`, "");
  out.push("### Access changes", "");
  const delta = plan.access_changes;
  if (!delta || !delta.changes.length) out.push("Nobody gains or loses a role.", "");
  else {
    out.push("| | Principal | Role | Condition | Object | Because of |", "|---|---|---|---|---|---|");
    for (const c of delta.changes) {
      out.push(`| ${c.action === "grant" ? "➕ grant" : "➖ revoke"} | \`${cell(c.principal)}\` | \`${cell(c.role)}\` | ${c.condition ? cell(c.condition.title) : ""} | \`${cell(c.object)}\` | ${c.addresses.map((a) => `\`${a}\``).join(", ")} |`);
    }
    out.push("");
  }
  if (delta?.condition_changes?.length) {
    out.push("Conditions reworded (same expression, nobody gains or loses access):", "");
    for (const c of delta.condition_changes) out.push(`- \`${cell(c.role)}\` on \`${cell(c.object)}\`: ${cell(rewordingText(c))} (${c.addresses.map((a) => `\`${a}\``).join(", ")})`);
    out.push("");
  }
  if (delta?.incomplete.length) out.push(`_Known only after apply for: ${delta.incomplete.map((o) => `\`${o}\``).join(", ")}._`, "");
  out.push("### Lint", "");
  if (!lint.length) out.push("No findings.", "");
  else {
    for (const d of lint) {
      const where = d.file ? `\`${cell(d.file.split("/").pop() ?? "")}:${d.line}:${d.column}\` ` : "";
      out.push(`- ${d.severity === "error" ? "❌" : "⚠️"} ${where}${cell(d.summary)}${d.detail ? ` — ${cell(d.detail)}` : ""}`);
    }
    out.push("");
  }
  out.push("<details><summary>Full plan</summary>", "", "```", toPlain(planLines(plan)).trimEnd(), "```", "", "</details>", "");
  return out.join("\n");
}
