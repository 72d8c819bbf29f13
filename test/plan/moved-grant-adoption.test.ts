// A grant that moves between resources of the same stack in one apply (a rename without `moved:`,
// a binding replaced by a member resource) stays converge's own: the new resource does not adopt
// it (a later destroy revokes it) unless the resource that held it had adopted it. A grant that no
// resource of the state holds is adopted, as before.
import { describe, expect, it } from "vitest";
import type { Plan, Policy, ResourceChange, State } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { RP, bindingState, fakeCloud, makeState, planOptions, STACK_HEAD, stackOf } from "../fixtures/builders.js";

const RP_MEMBER = "cloudnative:backup/v1:RestorePlanIamMember";
const ADMIN = "roles/gkebackup.admin";
const ZOE = "user:zoe@example.com";
const ALICE = "user:alice@example.com";
const BOB = "user:bob@example.com";

const memberYaml = (address: string, member: string) =>
  `  ${address}:\n    type: ${RP_MEMBER}\n    properties:\n      name: ` +
  `nightly\n      role: ${ADMIN}\n      member: ${member}\n`;

function rpMemberState(address: string, member: string, adopted = false): State["resources"][number] {
  const inputs = { name: RP, role: ADMIN, member };
  const id = `${RP} ${ADMIN} ${member}`;
  return {
    address,
    type: RP_MEMBER,
    id,
    inputs,
    outputs: { ...inputs, etag: "AAAAAAAAAAE=", id, project: "my-project" },
    dependencies: [],
    ...(adopted ? { adopted: true } : {}),
  };
}

const live = (members: string[]): Policy => ({
  version: 1,
  bindings: [{ role: ADMIN, members }],
  etag: "AAAAAAAAAAE=",
});

async function run(resources: string, state: State | undefined, members: string[]): Promise<Plan> {
  const r = await plan(
    stackOf(`${STACK_HEAD}resources:\n${resources}`),
    state,
    fakeCloud({ policies: { [RP]: live(members) } }).port,
    planOptions(),
  );
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return r.plan;
}

const change = (p: Plan, address: string): ResourceChange => {
  const c = p.resource_changes.find((x) => x.address === address);
  if (!c) throw new Error(`no change for ${address}`);
  return c;
};

describe("a grant that moves between resources of the stack", () => {
  it("is not adopted by a renamed member resource when converge created it", async () => {
    const p = await run(memberYaml("m2", ZOE), makeState("t", [rpMemberState("m1", ZOE)]), [ZOE]);
    expect(change(p, "m2").change.action).toEqual("create");
    expect(change(p, "m2").after_adopted).toBeUndefined();
    expect(change(p, "m1").change.action).toEqual("delete");
    expect(change(p, "m1").before_adopted).toBeUndefined();
  });

  it("is not adopted by a member resource that takes it over from a binding resource", async () => {
    const p = await run(
      memberYaml("m", ALICE),
      makeState("t", [bindingState("b", { name: RP, role: ADMIN, members: [ALICE] }, "AAAAAAAAAAE=")]),
      [ALICE],
    );
    expect(change(p, "m").change.action).toEqual("create");
    expect(change(p, "m").after_adopted).toBeUndefined();
    expect(change(p, "b").change.action).toEqual("delete");
  });

  it("is not adopted by a member resource replaced onto it", async () => {
    // m2 held bob and now holds zoe (a replacement), while m1, which held zoe, goes.
    const p = await run(memberYaml("m2", ZOE), makeState("t", [rpMemberState("m1", ZOE), rpMemberState("m2", BOB)]), [
      ZOE,
      BOB,
    ]);
    expect(change(p, "m2").change.action).toEqual("replace");
    expect(change(p, "m2").after_adopted).toBeUndefined();
  });

  it("stays adopted when the member resource that held it had adopted it", async () => {
    const p = await run(memberYaml("m2", ZOE), makeState("t", [rpMemberState("m1", ZOE, true)]), [ZOE]);
    expect(change(p, "m2").after_adopted).toBe(true);
    expect(change(p, "m1").before_adopted).toBe(true);
  });

  it("is adopted when no resource of the state holds it (granted outside converge)", async () => {
    const p = await run(memberYaml("m2", ZOE), makeState("t", [rpMemberState("m1", BOB)]), [ZOE, BOB]);
    expect(change(p, "m2").after_adopted).toBe(true);
    const fresh = await run(memberYaml("m2", ZOE), undefined, [ZOE]);
    expect(change(fresh, "m2").after_adopted).toBe(true);
  });

  it("is adopted when a binding resource of the state held the member on another role only", async () => {
    const other = bindingState("b", { name: RP, role: "roles/gkebackup.viewer", members: [ZOE] }, "AAAAAAAAAAE=");
    const p = await run(memberYaml("m", ZOE), makeState("t", [other]), [ZOE]);
    expect(change(p, "m").after_adopted).toBe(true);
  });
});
