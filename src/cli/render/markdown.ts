// `plan --format markdown`: a pull-request comment with counts, the access delta, lint findings
// and the full plan in a collapsible block. Every value from a stack or the cloud is escaped for
// where it stands (markdown-text.ts): the comment has this structure whatever the values hold.
// It fits a GitHub comment: a plan whose comment would not is summarised (no full plan, then as
// many access rows as fit, revocations first), saying what was left out.
import type { AccessChange, Plan } from "../../generated/schemas.js";
import { pushAll } from "../../base/arrays.js";
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import { planCounts } from "../../contracts/actions.js";
import { toPlain } from "../../diagnostics/lines.js";
import { planLines } from "./plan-text.js";
import { lookalikeFlag, rewordingText, shortText } from "./access-summary.js";
import { lookalikeText } from "../../iam/lookalike.js";
import { mdCode, mdCodeBlock, mdText } from "./markdown-text.js";

/** Addresses as code spans, comma-separated. */
const codes = (values: readonly string[], cell = false) => values.map((v) => mdCode(v, cell)).join(", ");

/** GitHub's limit on a comment's size, in characters. */
export const GITHUB_COMMENT_MAX = 65_536;
/** What the comment leaves of it to the CI recipe (templates/init): its marker and a link. */
const COMMENT_HEADROOM = 1_024;

const REVIEW_PAGE =
  "_Who gains and loses what, at a glance: the review page (`converge show --format html PLANFILE`;" +
  " in CI, `review.html` in the plan's artifact)._";

/** The comment; summarised to fit `max` characters when the whole one would not. */
export function planMarkdown(
  plan: Plan,
  lint: readonly Diagnostic[],
  max = GITHUB_COMMENT_MAX - COMMENT_HEADROOM,
): string {
  const whole = commentMarkdown(plan, lint, undefined);
  if (whole.length <= max) return whole;
  // The access rows get what the rest leaves; the rest is what it is with no access rows.
  const rest = commentMarkdown(plan, lint, 0).length;
  return cutToFit(commentMarkdown(plan, lint, Math.max(0, max - rest)), max);
}

/** The comment with the access table's rows in `budget` characters (undefined: all, and the full plan). */
function commentMarkdown(plan: Plan, lint: readonly Diagnostic[], budget: number | undefined): string {
  const n = planCounts(plan);
  const out: string[] = [];
  out.push(`## converge plan: ${mdCode(plan.stack.name)}`, "");
  if (plan.target) out.push(`Target: ${mdText(plan.target)}`, "");
  const counts = `**${n.import} to import, ${n.add} to add, ${n.change} to change, ${n.destroy} to destroy.**`;
  out.push(plan.applyable ? counts : "**No changes.** The access policies match the stack.", "");
  out.push("| Import | Add | Change | Destroy | Drift |", "|---:|---:|---:|---:|---:|");
  out.push(`| ${n.import} | ${n.add} | ${n.change} | ${n.destroy} | ${plan.resource_drift.length} |`, "");
  out.push(REVIEW_PAGE, "");
  out.push("### Access changes", "");
  accessMarkdown(plan, out, budget);
  const shown = budget === undefined ? Infinity : SUMMARY_LISTED;
  if (plan.guardrails) guardrailMarkdown(plan.guardrails, out, shown);
  out.push("### Lint", "");
  if (!lint.length) out.push("No findings.", "");
  else {
    for (const d of lint.slice(0, shown)) {
      const where = d.file ? `${mdCode(`${d.file.split("/").pop() ?? ""}:${d.line}:${d.column}`)} ` : "";
      const detail = d.detail ? ` — ${mdText(d.detail)}` : "";
      out.push(`- ${d.severity === "error" ? "❌" : "⚠️"} ${where}${mdText(d.summary)}${detail}`);
    }
    const more = lint.length - shown;
    if (more > 0) out.push("", `_${more} more lint findings are left out: the review page lists them all._`);
    out.push("");
  }
  if (budget !== undefined) {
    out.push("_The full plan is left out: this comment would exceed GitHub's limit of 65,536 characters._", "");
    out.push("_`converge show PLANFILE` prints it, `converge show --format html PLANFILE` makes the review page._", "");
    return out.join("\n");
  }
  out.push("<details><summary>Full plan</summary>", "");
  for (const l of mdCodeBlock(toPlain(planLines(plan)).trimEnd())) out.push(l);
  out.push("", "</details>", "");
  return out.join("\n");
}

/** Guardrail results and lint findings a summarised comment lists before it counts the rest. */
const SUMMARY_LISTED = 50;

function guardrailMarkdown(g: NonNullable<Plan["guardrails"]>, out: string[], shown: number): void {
  out.push("### Guardrails", "");
  if (!g.results.length) out.push(`All ${g.rules.length} rules passed.`, "");
  else out.push("| Rule | Enforcement | Change | Principal | Role | Object | Resource |", `|${"---|".repeat(7)}`);
  for (const r of g.results.slice(0, shown)) {
    const values = [r.rule, r.enforcement, r.change, r.principal, r.role, r.object, r.resource];
    const cells = values.map((v) => mdCode(v, true));
    out.push(`| ${cells.join(" | ")} |${r.error ? ` could not be evaluated: ${mdText(r.error)}` : ""}`);
  }
  const more = g.results.length - shown;
  if (more > 0) out.push("", `_${more} more guardrail results are left out: the review page lists them all._`);
  if (g.results.length) out.push("");
}

/** The comment cut at the last whole line that leaves room under `max` for saying so: the last
 *  resort, when even the summary (its values are a stack's and a server's) would not fit. */
function cutToFit(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = "\n\n_The comment is cut here: it would exceed GitHub's limit. The review page shows the whole plan._\n";
  const end = text.lastIndexOf("\n", max - note.length);
  return text.slice(0, Math.max(0, end)) + note;
}

/** The access table's rows, revocations first when they must fit `budget` characters, and the
 *  line saying how many were left out. */
function accessRows(
  changes: readonly AccessChange[],
  row: (c: AccessChange) => string,
  budget: number | undefined,
): string[] {
  if (budget === undefined) return changes.map(row);
  const ordered = [...changes.filter((c) => c.action === "revoke"), ...changes.filter((c) => c.action === "grant")];
  const out: string[] = [];
  let used = CUT_NOTE_MAX;
  let shown = 0;
  for (const c of ordered) {
    const r = row(c);
    if (used + r.length + 1 > budget) break;
    out.push(r);
    used += r.length + 1;
    shown++;
  }
  const cut = ordered.slice(shown);
  if (!cut.length) return out;
  const revokes = cut.filter((c) => c.action === "revoke").length;
  const counts = `${revokes} revocations, ${cut.length - revokes} grants`;
  out.push(
    "",
    `_${cut.length} more access changes are left out (${counts}): ` +
      "the review page and `converge show --view access PLANFILE` list them all._",
  );
  return out;
}
/** Room kept in the access budget for the line saying what was left out. */
const CUT_NOTE_MAX = 200;

/** The access delta: a table row per grant or revocation (those that fit `budget` characters), a
 *  list item per reworded condition. */
function accessMarkdown(plan: Plan, out: string[], budget: number | undefined): void {
  const delta = plan.access_changes;
  if (!delta || !delta.changes.length) out.push("Nobody gains or loses a role.", "");
  else {
    const flag = lookalikeFlag(delta);
    out.push("| | Principal | Role | Condition | Object | Because of |", "|---|---|---|---|---|---|");
    const row = (c: AccessChange) => {
      const action = c.action === "grant" ? "➕ grant" : "➖ revoke";
      const condition = c.condition ? mdText(shortText(c.condition.title)) : "";
      const principal = `${mdCode(c.principal, true)}${flag(c.principal) ? " ⚠️ lookalike" : ""}`;
      const cells = [action, principal, mdCode(c.role, true), condition, mdCode(c.object, true)];
      return `| ${cells.join(" | ")} | ${codes(c.addresses, true)} |`;
    };
    pushAll(out, accessRows(delta.changes, row, budget));
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
