// `plan --format markdown`: a pull-request comment with counts, the access delta, lint findings
// and the full plan in a collapsible block. Every value from a stack or the cloud is escaped for
// where it stands (markdown-text.ts): the comment has this structure whatever the values hold.
import type { Plan } from "../../generated/schemas.js";
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import { planCounts } from "../../contracts/actions.js";
import { toPlain } from "../../diagnostics/lines.js";
import { planLines } from "./plan-text.js";
import { lookalikeFlag, rewordingText, shortText } from "./access-summary.js";
import { lookalikeText } from "../../iam/lookalike.js";
import { mdCode, mdCodeBlock, mdText } from "./markdown-text.js";

/** Addresses as code spans, comma-separated. */
const codes = (values: readonly string[], cell = false) => values.map((v) => mdCode(v, cell)).join(", ");

export function planMarkdown(plan: Plan, lint: readonly Diagnostic[]): string {
  const n = planCounts(plan);
  const out: string[] = [];
  out.push(`## converge plan: ${mdCode(plan.stack.name)}`, "");
  if (plan.target) out.push(`Target: ${mdText(plan.target)}`, "");
  const counts = `**${n.import} to import, ${n.add} to add, ${n.change} to change, ${n.destroy} to destroy.**`;
  out.push(plan.applyable ? counts : "**No changes.** The access policies match the stack.", "");
  out.push("| Import | Add | Change | Destroy | Drift |", "|---:|---:|---:|---:|---:|");
  out.push(`| ${n.import} | ${n.add} | ${n.change} | ${n.destroy} | ${plan.resource_drift.length} |`, "");
  out.push("### Access changes", "");
  accessMarkdown(plan, out);
  if (plan.guardrails) {
    const g = plan.guardrails;
    out.push("### Guardrails", "");
    if (!g.results.length) out.push(`All ${g.rules.length} rules passed.`, "");
    else out.push("| Rule | Enforcement | Change | Principal | Role | Object | Resource |", `|${"---|".repeat(7)}`);
    for (const r of g.results) {
      const values = [r.rule, r.enforcement, r.change, r.principal, r.role, r.object, r.resource];
      const cells = values.map((v) => mdCode(v, true));
      out.push(`| ${cells.join(" | ")} |${r.error ? ` could not be evaluated: ${mdText(r.error)}` : ""}`);
    }
    if (g.results.length) out.push("");
  }
  out.push("### Lint", "");
  if (!lint.length) out.push("No findings.", "");
  else {
    for (const d of lint) {
      const where = d.file ? `${mdCode(`${d.file.split("/").pop() ?? ""}:${d.line}:${d.column}`)} ` : "";
      const detail = d.detail ? ` — ${mdText(d.detail)}` : "";
      out.push(`- ${d.severity === "error" ? "❌" : "⚠️"} ${where}${mdText(d.summary)}${detail}`);
    }
    out.push("");
  }
  out.push("<details><summary>Full plan</summary>", "");
  for (const l of mdCodeBlock(toPlain(planLines(plan)).trimEnd())) out.push(l);
  out.push("", "</details>", "");
  return out.join("\n");
}

/** The access delta: a table row per grant or revocation, a list item per reworded condition. */
function accessMarkdown(plan: Plan, out: string[]): void {
  const delta = plan.access_changes;
  if (!delta || !delta.changes.length) out.push("Nobody gains or loses a role.", "");
  else {
    const flag = lookalikeFlag(delta);
    out.push("| | Principal | Role | Condition | Object | Because of |", "|---|---|---|---|---|---|");
    for (const c of delta.changes) {
      const action = c.action === "grant" ? "➕ grant" : "➖ revoke";
      const condition = c.condition ? mdText(shortText(c.condition.title)) : "";
      const principal = `${mdCode(c.principal, true)}${flag(c.principal) ? " ⚠️ lookalike" : ""}`;
      const cells = [action, principal, mdCode(c.role, true), condition, mdCode(c.object, true)];
      out.push(`| ${cells.join(" | ")} | ${codes(c.addresses, true)} |`);
    }
    out.push("");
  }
  if (delta?.lookalikes?.length) {
    out.push("**Principals that look like others:**", "");
    for (const l of delta.lookalikes) out.push(`- ⚠️ ${mdCode(l.principal)} ${mdText(lookalikeText(l))}`);
    out.push("");
  }
  if (delta?.condition_changes?.length) {
    out.push("Conditions reworded (same expression, nobody gains or loses access):", "");
    for (const c of delta.condition_changes) {
      out.push(`- ${mdCode(c.role)} on ${mdCode(c.object)}: ${mdText(rewordingText(c))} (${codes(c.addresses)})`);
    }
    out.push("");
  }
  if (delta?.incomplete.length) out.push(`_Known only after apply for: ${codes(delta.incomplete)}._`, "");
}
