// Issue 18, repetition: `options.forEach` makes one instance per element, addressed name["key"]
// (a string element, a map key) or name[index]; ${each.key} / ${each.value} are the instance's own;
// the collection must be known when the stack loads; errors are positioned.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { splitAddress } from "../../src/language/addresses.js";
import { plan } from "../../src/plan/planner.js";
import { BINDING, EP, MEMBER, RP, STACK_HEAD, fakeCloud, planOptions, stackOf } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";
const HEAD = STACK_HEAD;

const STACK = `${HEAD}config:
  roles:
    type: map
    default: { viewer: [user:a@example.com], admin: [user:b@example.com] }
variables:
  people: [c, 7]
resources:
  bindings:
    type: ${BINDING}
    options:
      forEach: \${roles}
    properties:
      name: nightly
      role: roles/gkebackup.\${each.key}
      members: \${each.value}
  members:
    type: ${MEMBER}
    options:
      forEach: [user:x@example.com, user:y@example.com]
      dependsOn: [bindings]
    properties:
      name: churn
      role: roles/aiplatform.viewer
      member: \${each.value}
outputs:
  etag: \${bindings["viewer"].etag}
`;

const world = () => ({ policies: { [RP]: { bindings: [] }, [EP]: { bindings: [] } } });

describe("forEach", () => {
  it("makes one instance per element, with each.key and each.value", () => {
    const s = stackOf(STACK);
    expect([...s.resources.keys()]).toEqual([
      'bindings["viewer"]',
      'bindings["admin"]',
      'members["user:x@example.com"]',
      'members["user:y@example.com"]',
    ]);
    expect(s.resources.get('bindings["admin"]')!.properties).toEqual({
      name: "nightly",
      role: "roles/gkebackup.admin",
      members: ["user:b@example.com"],
    });
    // dependsOn a forEach's name orders after every instance.
    expect([...s.graph.dependencies('members["user:x@example.com"]')].sort()).toEqual([
      'bindings["admin"]',
      'bindings["viewer"]',
    ]);
  });

  it("keys a list by its strings, other elements by their index", () => {
    const text = STACK.replace("forEach: [user:x@example.com, user:y@example.com]", "forEach: ${people}").replace(
      "member: ${each.value}",
      "member: user:p-${each.key}@example.com",
    );
    expect([...stackOf(text).resources.keys()].slice(2)).toEqual(['members["c"]', "members[1]"]);
    expect(splitAddress("members[1]")).toEqual({ name: "members", index: 1 });
    expect(splitAddress('a["x\\"y"]')).toEqual({ name: "a", index: 'x"y' });
  });

  it("plans every instance, and a reference to an instance reads its values", async () => {
    const r = await plan(stackOf(STACK), undefined, fakeCloud(world()).port, planOptions());
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(r.plan.resource_changes.map((c) => [c.address, c.change.action])).toEqual([
      ['bindings["viewer"]', "create"],
      ['bindings["admin"]', "create"],
      ['members["user:x@example.com"]', "create"],
      ['members["user:y@example.com"]', "create"],
    ]);
  });

  it("reports a collection not known at load, a duplicate, a scalar, and a bad each reference, positioned", () => {
    const text = `${HEAD}variables:
  lake:
    fn::invoke:
      function: cloudnative:metastore/v1alpha:getFederation
      arguments: { federationId: lake, location: us-central1 }
resources:
  a:
    type: ${MEMBER}
    options: { forEach: "\${lake.labels}" }
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${each.value}@example.com" }
  b:
    type: ${MEMBER}
    options: { forEach: [x, x] }
    properties: { name: churn, role: roles/aiplatform.viewer, member: user:b@example.com }
  c:
    type: ${MEMBER}
    options: { forEach: 3 }
    properties: { name: churn, role: roles/aiplatform.viewer, member: user:c@example.com }
  d:
    type: ${MEMBER}
    options: { forEach: [p, q] }
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${each.name}@example.com" }
`;
    const d = parseStack(FILE, text).diagnostics;
    expect(d.map((x) => [x.summary, x.line])).toEqual([
      ["resources.a.options.forEach: must be known when the stack loads", 13],
      ['resources.b.options.forEach: "x" is in the list twice', 17],
      ["resources.c.options.forEach: expected a list or a map, got number", 21],
      [
        'resources.d.properties.member: cannot evaluate "${each.name}": each has no field "name"; it has key, value',
        26,
      ],
    ]);
  });
});
