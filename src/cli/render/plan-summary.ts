// The lines a plan starts and ends with: where its calls went, and its counts.
import type { Plan } from "../../generated/schemas.js";
import { planCounts } from "../../contracts/actions.js";
import { type Line, seg } from "../../diagnostics/lines.js";

/** "Target: …" and a blank line, or none when the plan has no target. */
export function targetLines(plan: Plan): Line[] {
  return plan.target ? [[seg("Target: ", "bold"), seg(plan.target)], []] : [];
}

/** The one-line summary, also used by apply's confirmation. */
export function summaryText(plan: Plan): string {
  const n = planCounts(plan);
  return `Plan: ${n.import} to import, ${n.add} to add, ${n.change} to change, ${n.destroy} to destroy.`;
}
