// The guardrails' results in the human views: under the access summary of a plan, above the
// approval prompt and in `--view access`. Pure: the plan's report → lines (escaped when shown).
import type { GuardrailReport, GuardrailResult } from "../../generated/schemas.js";
import { type Line, seg } from "../../diagnostics/lines.js";

const MARK: Record<GuardrailResult["enforcement"], string> = {
  advisory: "  ! ",
  mandatory: "  x ",
  "owner-approval": "  ? ",
};

/** One line a result, each with its rule, level, change and resource; a line saying the rules
 *  passed when none flags a change. Nothing without rules. */
export function guardrailLines(report: GuardrailReport | undefined): Line[] {
  if (!report) return [];
  const n = report.results.length;
  const head: Line = [
    seg("Guardrails: ", "bold"),
    seg(
      n ? `${n} finding${n === 1 ? "" : "s"} from ${report.rules.length} rules` : `${report.rules.length} rules passed`,
      "bold",
    ),
  ];
  const lines: Line[] = [head];
  for (const r of report.results) {
    const style = r.enforcement === "advisory" ? "warning" : "remove";
    const what = `${r.rule} (${r.enforcement}): ${r.change} of ${r.role} to ${r.principal} on ${r.object}`;
    lines.push([
      seg(MARK[r.enforcement], style),
      seg(what),
      seg(r.resource ? ` (${r.resource})` : "", "dim"),
      seg(r.error ? ` could not be evaluated: ${r.error}` : "", "warning"),
    ]);
  }
  return lines;
}
