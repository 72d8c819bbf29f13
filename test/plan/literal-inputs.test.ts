// A resource whose properties are all literals is planned without resolving them (nothing to
// resolve, no secret, no unknown) and without a second schema check (the stack schema made it at
// load): the result must be what resolving gave. A forEach instance's values are substituted
// after that check, so they are still checked at plan time.
import { describe, expect, it } from "vitest";
import { plan } from "../../src/plan/planner.js";
import { sameBindings } from "../../src/iam/policy.js";
import { BINDING, RP, STACK_HEAD, fakeCloud, planOptions, stackOf } from "../fixtures/builders.js";

const world = () => ({ policies: { [RP]: { bindings: [] } } });

/** A stack of one binding resource `viewers` on the nightly restore plan; `more`: further
 *  property lines (indented as properties). */
const viewersStack = (members: string, more = "") => `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: ${members}
${more}`;

describe("literal inputs", () => {
  it("unescapes $$ in a literal value, as resolving does", async () => {
    const text = viewersStack(
      "[user:bob@example.com]",
      `      condition:
        title: costs $$5
        expression: request.time < timestamp("2030-01-01T00:00:00Z")
`,
    );
    const r = await plan(stackOf(text), undefined, fakeCloud(world()).port, planOptions());
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const after = r.plan.resource_changes[0]!.change.after as { condition: { title: string } };
    expect(after.condition.title).toBe("costs $5");
  });

  it("checks a forEach instance's substituted values against the type's schema", async () => {
    const text = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    options:
      forEach:
        a: { x: 1 }
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: \${each.value}
`;
    const r = await plan(stackOf(text), undefined, fakeCloud(world()).port, planOptions());
    expect(r.diagnostics.some((d) => d.severity === "error" && /members/.test(d.summary))).toBe(true);
    expect(r.plan.resource_changes).toEqual([]);
  });
});

describe("a literal resource's inputs, normalised once when the stack loads", () => {
  const text = viewersStack("[user:B@example.com, user:a@example.com]");
  // A marker in the loader's inputs shows whether the plan took them or normalised again.
  const marked = (project?: string) => {
    const stack = stackOf(text);
    const r = stack.resources.get("viewers")!;
    expect(r.loadTimeInputs?.inputs.members).toEqual(["user:a@example.com", "user:B@example.com"]);
    r.loadTimeInputs = { ...r.loadTimeInputs!, inputs: { ...r.loadTimeInputs!.inputs, members: ["user:m@x.com"] } };
    if (project) r.loadTimeInputs.project = project;
    return stack;
  };
  const members = async (project?: string) => {
    const r = await plan(marked(project), undefined, fakeCloud(world()).port, planOptions());
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    return (r.plan.resource_changes[0]!.change.after as { members: string[] }).members;
  };

  it("are the plan's under the same provider defaults", async () => {
    expect(await members()).toEqual(["user:m@x.com"]);
  });

  it("are normalised again under other defaults", async () => {
    expect(await members("another-project")).toEqual(["user:a@example.com", "user:B@example.com"]);
  });
});

describe("sameBindings", () => {
  const cond = { title: "t", expression: "true" };
  it("holds for the same bindings as written, and for the same grants in another order or case", () => {
    const a = [
      { role: "r1", members: ["user:a@x.com", "user:b@x.com"] },
      { role: "r2", members: ["user:c@x.com"], condition: cond },
    ];
    expect(
      sameBindings(
        a,
        a.map((b) => ({ ...b, members: [...b.members] })),
      ),
    ).toBe(true);
    expect(
      sameBindings(a, [
        { role: "r2", members: ["user:C@x.com"], condition: { ...cond } },
        { role: "r1", members: ["user:b@x.com", "user:a@x.com"] },
      ]),
    ).toBe(true);
  });
  it("fails for another member, role or condition", () => {
    const a = [{ role: "r1", members: ["user:a@x.com"] }];
    expect(sameBindings(a, [{ role: "r1", members: ["user:b@x.com"] }])).toBe(false);
    expect(sameBindings(a, [{ role: "r2", members: ["user:a@x.com"] }])).toBe(false);
    expect(sameBindings(a, [{ role: "r1", members: ["user:a@x.com"], condition: cond }])).toBe(false);
  });
});
