// Every rule on every access change of a plan: a grant, a revocation, or a member whose binding's
// condition is reworded (condition-change); `policy` is the object's policy as the plan leaves it.
import type { AccessChange, AccessDelta, GuardrailReport, GuardrailResult, Policy } from "../generated/schemas.js";
import type { RuleSet } from "./rules.js";
import { policyOf, type RuleValues, valuesOf } from "./values.js";

export interface EvaluationContext {
  stack: string;
  workspace: string;
  now: Date;
}

/** The report of `rules` on `delta`, the end-state policies by object name given in `after`. */
export function evaluateRules(
  rules: RuleSet,
  delta: AccessDelta,
  after: ReadonlyMap<string, Policy>,
  where: EvaluationContext,
): GuardrailReport {
  const results: GuardrailResult[] = [];
  const policies = new Map<string, RuleValues["policy"]>();
  const policy = (name: string) => {
    let p = policies.get(name);
    if (!p) policies.set(name, (p = policyOf(after.get(name) ?? { bindings: [] })));
    return p;
  };
  const judge = (c: AccessChange, change: RuleValues["change"]) => {
    const values = valuesOf(c, change, policy(c.object), where);
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
  return { rules_digest: rules.digest, rules: ruleList, results };
}
