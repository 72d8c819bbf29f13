// How `converge drift` shows its findings: as text for a terminal, as Markdown for a page (an issue,
// a pull request, a chat), and the one sentence per finding both (and SARIF) say. Member, role,
// object and condition come from the cloud or the stack: escaped for where they stand.
import type { Condition } from "../../generated/schemas.js";
import { type DriftClass, type DriftFinding, DRIFT_LETTER } from "../../plan/drift.js";
import { terminalText } from "../../diagnostics/terminal-text.js";
import { mdCode, mdText } from "./markdown-text.js";

/** One label per class, as the report's first column and SARIF's rule names. */
export const DRIFT_LABEL: Readonly<Record<DriftClass, string>> = {
  removed: "removed out of band",
  added: "added to a managed role",
  unmanaged: "unmanaged",
  "deleted-principal": "deleted principal",
  condition: "condition changed",
};

/** How a piece of the sentence is written: plain for a terminal, a code span on a page. */
type Quote = (value: string) => string;

const conditionText = (c: Condition | undefined, q: Quote) => (c ? `condition ${q(c.title)}` : "no condition");

/** What happened, in one sentence: who, which role, on what, and what comes next. */
export function findingSentence(f: DriftFinding, q: Quote = (v) => `"${v}"`): string {
  const cond = f.condition && f.class !== "condition" ? ` (${conditionText(f.condition, q)})` : "";
  const on = `${q(f.role)} on ${q(f.object)}${cond}`;
  const by = f.address ? q(f.address) : "";
  switch (f.class) {
    case "removed":
      return f.objectGone
        ? `${q(f.member)} lost ${on}: the object is gone (approved by ${by})`
        : `${q(f.member)} lost ${on}, which ${by} grants: converge drift --remediate restores it`;
    case "added":
      return f.revokedByNextApply
        ? `${q(f.member)} was given ${on}, which ${by} manages: the next apply revokes it`
        : `${q(f.member)} was given ${on}, which ${by} manages: the stack now grants it too`;
    case "unmanaged":
      return `${q(f.member)} holds ${on}, which no resource manages: converge drift --adopt --out FILE adopts it`;
    case "deleted-principal":
      return f.live
        ? `${q(f.member)} was deleted: ${q(f.live)} holds ${on} (granted by ${by})`
        : `${q(f.member)} holds ${on}: a deleted principal${by ? ` on a role ${by} manages` : ""}`;
    case "condition":
      return (
        `${q(f.member)} holds ${q(f.role)} on ${q(f.object)} with ${conditionText(f.condition, q)}, approved with ` +
        `${conditionText(f.was, q)} (${by})`
      );
  }
}

/** Counts by class, in the classes' order: "1 removed out of band, 2 unmanaged". */
function countsText(findings: readonly DriftFinding[]): string {
  const counts = new Map<DriftClass, number>();
  for (const f of findings) counts.set(f.class, (counts.get(f.class) ?? 0) + 1);
  return (Object.keys(DRIFT_LABEL) as DriftClass[])
    .filter((c) => counts.has(c))
    .map((c) => `${counts.get(c)} ${DRIFT_LABEL[c]}`)
    .join(", ");
}

const objectsOf = (findings: readonly DriftFinding[]) => new Set(findings.map((f) => f.object)).size;

/** The report for a terminal: a summary line, then one line per finding. */
export function driftText(findings: readonly DriftFinding[], policies: number, heading = "Drift"): string {
  const read = `${policies} ${policies === 1 ? "policy" : "policies"} read`;
  if (!findings.length) return `No drift: the live policies are as the state approved them (${read}).\n`;
  const n = findings.length;
  const lines = [
    `${heading}: ${n} ${n === 1 ? "difference" : "differences"} on ${objectsOf(findings)} ` +
      `${objectsOf(findings) === 1 ? "object" : "objects"} (${read}): ${countsText(findings)}`,
    "",
  ];
  for (const f of findings)
    lines.push(terminalText(`  (${DRIFT_LETTER[f.class]}) ${DRIFT_LABEL[f.class]}: ${findingSentence(f)}`));
  return lines.join("\n") + "\n";
}

/** The report as Markdown: a heading, the counts, a table of findings. */
export function driftMarkdown(findings: readonly DriftFinding[], policies: number, stack: string): string {
  const out = [`## Drift of stack ${mdCode(stack)}`, ""];
  if (!findings.length) {
    out.push(`No drift: the live policies are as the state approved them (${policies} read).`, "");
    return out.join("\n");
  }
  out.push(`${findings.length} differences on ${objectsOf(findings)} objects: ${countsText(findings)}.`, "");
  out.push("| Class | Object | Role | Member | Resource | What happened |", "|---|---|---|---|---|---|");
  for (const f of findings) {
    const cells = [
      mdText(`(${DRIFT_LETTER[f.class]}) ${DRIFT_LABEL[f.class]}`),
      mdCode(f.object, true),
      mdCode(f.role, true),
      mdCode(f.member, true),
      f.address ? mdCode(f.address, true) : "-",
      findingSentence(f, (v) => mdCode(v, true)),
    ];
    out.push(`| ${cells.join(" | ")} |`);
  }
  out.push("");
  return out.join("\n");
}
