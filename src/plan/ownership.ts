// Which grants the plan's surviving resources hold once it is applied. A revoke (a delete, or the
// old half of a replacement) must leave them alone: otherwise a grant that another change of the
// same plan creates or keeps vanishes, in whatever order the writes happen to run. And which
// grants converge itself made, as the prior state records them (OwnGrants): those are not adopted.
import type { Condition, Policy, ResourceChange, StateResource } from "../generated/schemas.js";
import { resourceDriver } from "../drivers/registry.js";
import { inputsOf } from "../drivers/inputs.js";
import type { Claim, IamDriver, IamInputs } from "../drivers/types.js";
import { applyModifications, type PolicyModification } from "../iam/policy.js";
import { bindingKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";
import { pushAll } from "../base/arrays.js";

interface Held {
  /** A binding resource is authoritative for this role and condition. */
  binding: boolean;
  /** Members held by member resources (canonical keys), with a spelling of each. */
  members: Map<string, string>;
}

export class HeldGrants {
  private readonly held = new Map<string, Held>();
  /** Objects whose whole policy a resource holds (`${kind} ${object}`). */
  private readonly policies = new Set<string>();

  /** The grants of every change that is not a delete and whose values are known at plan time. */
  static of(changes: readonly ResourceChange[]): HeldGrants {
    const h = new HeldGrants();
    for (const c of changes) {
      if (c.mode !== "managed" || c.config || !c.change.after || isDelete(c)) continue;
      const d = resourceDriver(c.type);
      if (d) h.hold(d.claims(inputsOf(d, c.change.after)));
    }
    return h;
  }

  hold(claims: readonly Claim[]): void {
    for (const c of claims) {
      if (c.scope === "policy") {
        this.policies.add(`${c.kind} ${c.object}`);
        continue;
      }
      const key = heldKey(c.kind, c.object, c.role, c.condition);
      let h = this.held.get(key);
      if (!h) this.held.set(key, (h = { binding: false, members: new Map() }));
      if (c.scope === "binding") h.binding = true;
      else h.members.set(memberKey(c.member), c.member);
    }
  }

  /**
   * The modifications of one policy with their revokes reduced to what no surviving resource
   * holds: a binding revoke keeps the members that member resources hold, and is dropped when a
   * binding resource takes the role over (its authoritative set decides); a member revoke is
   * dropped when that member is held; every revoke is dropped when a resource holds the whole
   * policy (it decides every binding). Grants pass unchanged (../plan/access.ts relies on it:
   * it asks only about removeBinding and removeMember).
   */
  guard(kind: Claim["kind"], object: string, mods: readonly PolicyModification[]): PolicyModification[] {
    const wholePolicy = this.policies.has(`${kind} ${object}`);
    const out: PolicyModification[] = [];
    for (const m of mods) {
      const h =
        m.kind === "removeBinding" || m.kind === "removeMember"
          ? this.held.get(heldKey(kind, object, m.role, m.condition))
          : undefined;
      if (wholePolicy && (m.kind === "removeBinding" || m.kind === "removeMember")) continue;
      if (!h) out.push(m);
      else if (h.binding) continue;
      else if (m.kind === "removeMember") {
        if (!h.members.has(memberKey(m.member))) out.push(m);
      } else if (m.kind === "removeBinding") out.push({ ...m, keep: [...(m.keep ?? []), ...h.members.values()] });
    }
    return out;
  }
}

function heldKey(kind: string, object: string, role: string, condition: Condition | undefined): string {
  return `${kind} ${object}\u0000${bindingKey(role, condition)}`;
}

function isDelete(c: ResourceChange): boolean {
  return c.change.action === "delete";
}

/**
 * The grants the resources of the prior state hold that converge did not adopt (it made them, or
 * an import or a binding or policy resource took them over): a grant that moves to another
 * resource of the stack in one apply stays converge's, so the new resource does not adopt it. A
 * grant only adopted members held stays adopted. Worked out on the first question, once per plan.
 */
export class OwnGrants {
  private byObject: Map<string, Policy> | undefined;

  constructor(private readonly prior: readonly StateResource[]) {}

  /** Whether such a resource holds the grant of member inputs `inputs` of `d`. */
  holds(d: IamDriver, inputs: IamInputs): boolean {
    const policy = (this.byObject ??= this.policies()).get(`${d.kind} ${d.policyName(inputs)}`);
    return policy !== undefined && d.observe(inputs, policy) !== undefined;
  }

  /** Each object's policy as the prior state's own grants alone would make it. */
  private policies(): Map<string, Policy> {
    const mods = new Map<string, PolicyModification[]>();
    for (const s of this.prior) {
      const d = s.adopted ? undefined : resourceDriver(s.type);
      if (!d) continue;
      const inputs = s.inputs as unknown as IamInputs;
      const key = `${d.kind} ${d.policyName(inputs)}`;
      let m = mods.get(key);
      if (!m) mods.set(key, (m = []));
      pushAll(m, d.modifications(undefined, inputs));
    }
    const out = new Map<string, Policy>();
    for (const [key, m] of mods) out.set(key, applyModifications({ bindings: [] }, m).policy);
    return out;
  }
}
