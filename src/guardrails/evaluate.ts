// Every rule on every access change of a plan: a grant, a revocation, or a member whose binding's
// condition is reworded (condition-change); `policy` is the object's policy as the plan leaves it,
// `policies` every policy of the stack (each the plan read) as it leaves them.
import type {
  AccessChange,
  AccessDelta,
  GuardrailPolicy,
  GuardrailReport,
  GuardrailResult,
  Plan,
} from "../generated/schemas.js";
import type { RuleSet } from "./rules.js";
import { policyOf, type PolicyValues, type RuleValues, stackPoliciesOf, valuesOf } from "./values.js";

export interface EvaluationContext {
  stack: string;
  workspace: string;
  now: Date;
}

/** The report of `rules` on `delta`, given the end state of every policy the plan read (those
 *  it changes among them); the report records them, for a saved plan to be judged again. */
export function evaluateRules(
  rules: RuleSet,
  delta: AccessDelta,
  after: readonly GuardrailPolicy[],
  where: EvaluationContext,
): GuardrailReport {
  const results: GuardrailResult[] = [];
  const byName = new Map(after.map((p) => [p.name, p]));
  const policies = new Map<string, PolicyValues>();
  const policy = (name: string) => {
    let p = policies.get(name);
    if (!p) policies.set(name, (p = policyOf(byName.get(name) ?? { bindings: [] })));
    return p;
  };
  const plan = { ...where, policies: stackPoliciesOf(after) };
  const lookalikes = new Map((delta.lookalikes ?? []).map((l) => [l.principal, l]));
  const judge = (c: AccessChange, change: RuleValues["change"]) => {
    const values = valuesOf(c, change, policy(c.object), plan, lookalikes.get(c.principal));
    for (const r of rules.rules) {
      const outcome = r.compiled.run(values);
      if (outcome === false) continue;
      const base = {
        rule: r.id,
        enforcement: r.enforcement,
        change,
        principal: c.principal,
        role: c.role,
        object: c.object,
        resource: values.resource,
      };
      results.push(outcome === true ? base : { ...base, error: outcome.message });
    }
  };
  for (const c of delta.changes) judge(c, c.action);
  for (const cc of delta.condition_changes ?? []) {
    for (const principal of cc.principals)
      judge(
        {
          object: cc.object,
          kind: cc.kind,
          principal,
          role: cc.role,
          condition: cc.after,
          action: "grant",
          addresses: cc.addresses,
        },
        "condition-change",
      );
  }
  const ruleList = rules.rules.map((r) => ({
    id: r.id,
    description: r.description,
    enforcement: r.enforcement,
    ...(r.approvers.length ? { approvers: r.approvers } : {}),
    ...(r.builtin ? { builtin: true } : {}),
  }));
  return { rules_digest: rules.digest, rules: ruleList, results, policies: [...after] };
}

/** The report of `rules` on a saved plan: its access changes judged on the end state it recorded
 *  (`guardrails.policies`), as of when it was made; undefined when it recorded none (a plan made
 *  without rules, or by an earlier version). */
export function evaluateSaved(rules: RuleSet, plan: Plan): GuardrailReport | undefined {
  const after = plan.guardrails?.policies;
  if (!after) return undefined;
  const workspace = plan.backend?.workspace ?? "default";
  const where = { stack: plan.stack.name, workspace, now: new Date(plan.timestamp) };
  return evaluateRules(rules, plan.access_changes ?? { changes: [], incomplete: [] }, after, where);
}
