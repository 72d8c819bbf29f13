// The principals of a plan's access delta that may look like another principal (../iam/lookalike.ts),
// compared with each other and with every member of the policies the plan touches.
import type { AccessDelta, Lookalike } from "../generated/schemas.js";
import { lookalikes } from "../iam/lookalike.js";
import type { PlannedPolicy } from "./access.js";

/** The members of the policies before and after the plan; none that holds a secret's text (the
 *  delta's principals are redacted, these are not, and a lookalike names the one it looks like). */
function* policyMembers(policies: readonly PlannedPolicy[], secrets: ReadonlySet<string>): Generator<string> {
  for (const p of policies) {
    for (const policy of [p.before, p.after]) {
      for (const b of policy.bindings ?? []) {
        for (const m of b.members ?? []) {
          let secret = false;
          for (const s of secrets) if (s && m.includes(s)) secret = true;
          if (!secret) yield m;
        }
      }
    }
  }
}

function* deltaPrincipals(delta: AccessDelta): Generator<string> {
  for (const c of delta.changes) yield c.principal;
  for (const c of delta.condition_changes ?? []) yield* c.principals;
}

export function accessLookalikes(
  delta: AccessDelta,
  policies: readonly PlannedPolicy[],
  secrets: ReadonlySet<string>,
): Lookalike[] {
  return lookalikes(deltaPrincipals(delta), policyMembers(policies, secrets));
}
