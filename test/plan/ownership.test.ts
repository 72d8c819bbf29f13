// HeldGrants: the revokes of a plan leave every grant another surviving resource holds, whatever
// the order of the writes (issue 11, item 1). Pure: claims in, modifications out.
import { describe, expect, it } from "vitest";
import { HeldGrants } from "../../src/plan/ownership.js";
import { applyModifications, type PolicyModification } from "../../src/iam/policy.js";

const X = "projects/p/locations/l/restorePlans/x";
const COND = { title: "t", expression: "true" };
const V = "roles/gkebackup.viewer";

function held(...claims: Parameters<HeldGrants["hold"]>[0]): HeldGrants {
  const h = new HeldGrants();
  h.hold(claims);
  return h;
}

describe("HeldGrants.guard", () => {
  const removeBinding: PolicyModification = { kind: "removeBinding", role: V };
  const removeMember: PolicyModification = { kind: "removeMember", role: V, member: "user:Dana@example.com" };

  it("drops every revoke on an object whose whole policy a resource holds, and only there", () => {
    const h = held({ scope: "policy", kind: "restorePlan", object: X });
    const grant: PolicyModification = { kind: "addMember", role: V, member: "user:eve@example.com" };
    expect(h.guard("restorePlan", X, [removeBinding, removeMember, grant])).toEqual([grant]);
    expect(h.guard("restorePlan", `${X}2`, [removeBinding])).toEqual([removeBinding]);
  });

  it(
    "passes every modification but removeBinding and removeMember unchanged, " +
      "whatever is held (the access delta asks only about those)",
    () => {
      const everything = held(
        { scope: "policy", kind: "restorePlan", object: X },
        { scope: "binding", kind: "restorePlan", object: X, role: V },
        { scope: "member", kind: "restorePlan", object: X, role: V, member: "user:eve@example.com" },
        { scope: "binding", kind: "restorePlan", object: X, role: V, condition: COND },
      );
      const grants: PolicyModification[] = [
        { kind: "setBinding", role: V, members: ["user:eve@example.com"] },
        { kind: "setBinding", role: V, condition: COND, members: [] },
        { kind: "addMember", role: V, member: "user:eve@example.com" },
        { kind: "setPolicy", bindings: [], auditConfigs: [] },
      ];
      for (const h of [new HeldGrants(), everything])
        for (const m of grants) expect(h.guard("restorePlan", X, [m])).toEqual([m]);
    },
  );

  it("drops a binding revoke when a binding resource takes the role over", () => {
    expect(
      held({ scope: "binding", kind: "restorePlan", object: X, role: V }).guard("restorePlan", X, [removeBinding]),
    ).toEqual([]);
  });

  it("keeps the members that member resources hold when a binding is revoked", () => {
    const h = held({ scope: "member", kind: "restorePlan", object: X, role: V, member: "user:carol@example.com" });
    const [m] = h.guard("restorePlan", X, [removeBinding]);
    expect(m).toEqual({ kind: "removeBinding", role: V, keep: ["user:carol@example.com"] });
    const live = { bindings: [{ role: V, members: ["user:alice@example.com", "user:Carol@example.com"] }] };
    expect(applyModifications(live, [m!]).policy.bindings).toEqual([{ role: V, members: ["user:Carol@example.com"] }]);
  });

  it("drops a member revoke when the same member (compared canonically) is held", () => {
    const h = held({ scope: "member", kind: "restorePlan", object: X, role: V, member: "user:dana@example.com" });
    expect(h.guard("restorePlan", X, [removeMember])).toEqual([]);
  });

  it("leaves revokes of other objects, kinds, roles, conditions and members alone, and every grant", () => {
    const h = held(
      { scope: "binding", kind: "restorePlan", object: X, role: V, condition: COND },
      { scope: "member", kind: "endpoint", object: X, role: V, member: "user:dana@example.com" },
      { scope: "member", kind: "restorePlan", object: X, role: V, member: "user:erin@example.com" },
    );
    const grant: PolicyModification = { kind: "setBinding", role: V, members: [] };
    expect(h.guard("restorePlan", X, [removeMember, grant])).toEqual([removeMember, grant]);
    expect(h.guard("restorePlan", `${X}2`, [removeBinding])).toEqual([removeBinding]);
    expect(h.guard("restorePlan", X, [{ kind: "removeBinding", role: "roles/other" }])).toEqual([
      { kind: "removeBinding", role: "roles/other" },
    ]);
  });
});
