// A plan-time check: Google refuses an allow policy with more than 1,500 principals, so a plan
// that would write one stops at plan time (the stack's own literal grants are checked at load
// time, src/config/policy-size.ts).
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { listed } from "../diagnostics/listed.js";
import { principalCount } from "../iam/policy.js";
import type { StackModel } from "../config/model.js";
import { LIMIT, MAX_PRINCIPALS, MAX_TEXT } from "../config/policy-size.js";
import type { PlannedPolicy } from "./access.js";

/**
 * Policies this plan would take over 1,500 principals: one error per object, naming the count,
 * at the first resource (in stack order) that changes it.
 */
export function plannedPolicySizeErrors(stack: StackModel, policies: readonly PlannedPolicy[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const order = [...stack.resources.keys()];
  for (const p of policies) {
    const count = principalCount(p.after);
    if (count <= MAX_PRINCIPALS) continue;
    const addresses = [...new Set([...p.byBinding.values()].flatMap((s) => [...s]))].sort(
      (a, b) => order.indexOf(a) - order.indexOf(b),
    );
    const first = addresses.find((a) => stack.resources.has(a));
    const where = first
      ? {
          file: stack.source.file,
          ...stack.source.position(["resources", stack.resources.get(first)!.decl], { key: true }),
          address: first,
        }
      : {};
    const shown = listed(addresses, 5);
    out.push(
      error(`${p.name}: the planned policy would hold ${count} principals, more than the ${MAX_TEXT} Google allows`, {
        ...where,
        detail: `${LIMIT}. It holds ${principalCount(p.before)} now; this plan changes it through ${shown}.`,
      }),
    );
  }
  return out;
}
