// Why a revocation happens, in a reviewer's words, from the resource changes that cause it: the
// resource leaves the stack (or the plan destroys everything), it is replaced, its members in the
// stack no longer list the principal, or the principal was granted outside converge on a binding
// or policy the stack holds authoritatively (so apply removes it).
import type { AccessChange, ResourceChange } from "../../../generated/schemas.js";
import { displayAction } from "../../../contracts/actions.js";
import { bindingKey } from "../../../iam/conditions.js";
import { grantKey } from "../../../iam/policy-effect.js";
import { grantsIn } from "./held-grants.js";

/** The cause of revocation `r` by one of its resources. */
function causeBy(r: AccessChange, c: ResourceChange, destroying: boolean): string {
  const action = displayAction(c);
  if (action === "delete") {
    return destroying ? `${c.address} is destroyed (plan --destroy)` : `${c.address} is removed from the stack`;
  }
  if (action === "replace") return `${c.address} is replaced (destroyed, then created again)`;
  const before = grantsIn(c.type, c.change.before);
  const key = grantKey(bindingKey(r.role, r.condition), r.principal);
  if (before && before.object === r.object && before.grants.has(key)) {
    return `${c.address} no longer lists this member in the stack`;
  }
  if (before && before.object !== r.object) return `${c.address} moves to another object`;
  const wholePolicy = Array.isArray((c.change.after as { bindings?: unknown } | null)?.bindings);
  const holds = wholePolicy ? "the whole policy" : "the binding";
  return `granted outside converge: ${c.address} holds ${holds} authoritatively`;
}

/** Every resource's cause of `r`, joined; "no resource of the stack" when none is known. */
export function revocationCause(
  r: AccessChange,
  byAddress: ReadonlyMap<string, ResourceChange>,
  destroying: boolean,
): string {
  const causes = r.addresses.flatMap((a) => {
    const c = byAddress.get(a);
    return c ? [causeBy(r, c, destroying)] : [];
  });
  return causes.length ? causes.join("; ") : "no resource of the stack is known to cause it";
}
