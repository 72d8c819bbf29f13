// What the rules' results decide, for every front end (../engine/operations.ts): a mandatory rule
// that fails makes the plan not applyable; an owner-approval rule that fails needs `--approve RULE`
// from one of its approvers (CONVERGE_ACTOR); a saved plan is refused when the rules changed.
import { type Diagnostic, error, UserError } from "../diagnostics/diagnostic.js";
import type { GuardrailReport, GuardrailResult, Plan } from "../generated/schemas.js";

/** Who applies and which owner-approval rules they approve (--approve RULE, repeatable). */
export interface Approval {
  actor: string;
  rules: readonly string[];
}

const describe = (r: GuardrailResult): string =>
  `${r.change} of ${r.role} to ${r.principal} on ${r.object}${r.resource ? ` (${r.resource})` : ""}` +
  (r.error ? `: the rule could not be evaluated: ${r.error}` : "");

/** The refusals of `report`: every mandatory failure, and every owner-approval failure that
 *  `approval` does not cover. */
function guardrailRefusals(report: GuardrailReport | undefined, approval: Approval | undefined): Diagnostic[] {
  if (!report) return [];
  const out: Diagnostic[] = [];
  const byRule = new Map<string, GuardrailResult[]>();
  for (const r of report.results) {
    if (r.enforcement !== "advisory") byRule.set(r.rule, (byRule.get(r.rule) ?? []).concat([r]));
  }
  for (const [id, results] of byRule) {
    const rule = report.rules.find((r) => r.id === id);
    const about = rule?.description ?? "";
    const list = results.map((r) => `  ${describe(r)}`).join("\n");
    if (results[0]!.enforcement === "mandatory") {
      const n = `${results.length} access change${results.length > 1 ? "s" : ""}`;
      const detail = `${list}\nNothing was applied. Change the stack, or the rule.`;
      out.push(error(`guardrail ${id} (mandatory) refuses ${n}: ${about}`, { code: "guardrail/mandatory", detail }));
      continue;
    }
    const approvers = rule?.approvers ?? [];
    if (!approval?.rules.includes(id)) {
      const how = `One of ${approvers.join(", ")} applies with --approve ${id} (CONVERGE_ACTOR names who applies).`;
      const detail = `${list}\n${how} Nothing was applied.`;
      out.push(error(`guardrail ${id} needs an owner's approval: ${about}`, { code: "guardrail/approval", detail }));
    } else if (!approvers.includes(approval.actor)) {
      const detail = `Its approvers: ${approvers.join(", ")}. CONVERGE_ACTOR names who applies. Nothing was applied.`;
      const summary = `--approve ${id}: "${approval.actor}" is not an approver of guardrail ${id}`;
      out.push(error(summary, { code: "guardrail/approval", detail }));
    }
  }
  return out;
}

/** Throws the refusals of `plan`'s guardrails, if any (before any write). */
export function enforceGuardrails(plan: Plan, approval: Approval | undefined): void {
  const refusals = guardrailRefusals(plan.guardrails, approval);
  if (refusals.length) throw new UserError(refusals);
}

/** The owner-approval rules `approval` approves that the plan flags, each with its approver:
 *  what a backend with history records of the apply (the local file keeps no history). */
export function approvedRules(plan: Plan, approval: Approval | undefined): { rule: string; actor: string }[] {
  const results = plan.guardrails?.results ?? [];
  const flagged = new Set(results.filter((r) => r.enforcement === "owner-approval").map((r) => r.rule));
  return (approval?.rules ?? []).filter((id) => flagged.has(id)).map((rule) => ({ rule, actor: approval!.actor }));
}

/** A saved plan is refused when it was checked against other rules than those in force now. */
export function checkSameRules(saved: Plan, label: string, digest: string | undefined): void {
  const then = saved.guardrails?.rules_digest;
  if (then === digest) return;
  const summary = `${label} was checked against other guardrail rules than those in force now`;
  const why =
    then === undefined
      ? "It was made without rules; rules are in force now."
      : digest === undefined
        ? "It was made under rules that are no longer given (the policies: section, --policy or CONVERGE_POLICY)."
        : "The rules (the policies: section or a rules file) changed since it was made.";
  const detail = `${why} Make the plan again (converge plan --out) and review it.`;
  throw new UserError(error(summary, { code: "guardrail/rules-changed", detail }));
}
