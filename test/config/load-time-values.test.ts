// What is known when the stack loads is checked when it loads: a resource property made only of
// inputs, literals, variables built from them and forEach keys/values is normalised by its
// driver (name, role, member, members), schema-checked, linted (condition) and claimed (two
// resources granting the same) by the loader; a property that waits on a resource output or a
// function result is left to the plan. A reference to a forEach instance that does not exist is
// an error at the reference.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { readInputs } from "../../src/config/var-files.js";
import { BINDING, MEMBER, STACK_HEAD, lakeVariable } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";

function load(stack: string, vars: string[] = [], opts: { inputsOptional?: boolean } = {}) {
  const read = readInputs({ vars, env: {} });
  expect(read.diagnostics).toEqual([]);
  return parseStack(FILE, stack, { inputs: read.given, ...opts });
}
const errors = (r: ReturnType<typeof load>) =>
  r.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.line}:${d.column}: ${d.summary}`);

const INPUTS = `${STACK_HEAD}config:
  who: { type: string }
  viewers: { type: list, default: [] }
  expr: { type: string, default: "true" }
variables:
  prefixed: "user:\${who}"
resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "\${who}" }
  b:
    type: ${BINDING}
    properties: { name: nightly, role: "roles/\${who}", members: ["\${who}"] }
  c:
    type: ${MEMBER}
    properties: { name: "\${who}", role: roles/aiplatform.user, member: "\${prefixed}" }
  d:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.admin
      members: \${viewers}
      condition: { title: t, expression: "\${expr}" }
`;

const NO_PREFIX = 'member "nobody" has no type prefix';

describe("values from inputs are checked when the stack loads", () => {
  it("a member, a list of members and a name made of inputs are normalised at their positions", () => {
    const r = load(INPUTS, ["who=nobody"]);
    expect(r.stack).toBeUndefined();
    const e = errors(r);
    expect(e).toContainEqual(expect.stringMatching(new RegExp(`^14:71: a: ${NO_PREFIX}`)));
    expect(e).toContainEqual(expect.stringMatching(new RegExp(`^17:66: b: ${NO_PREFIX}`)));
    // "nobody" is a valid endpoint id, "user:nobody" is not a valid member.
    expect(e.some((x) => x.startsWith("20:") && x.includes('c: member "user:nobody"'))).toBe(true);
    expect(e).toHaveLength(3);
  });

  it("a list input's bad element, a wrong-typed value and a bad condition expression are errors", () => {
    const r = load(INPUTS, [
      "who=user:ok@example.com",
      'viewers=["user:v@example.com", "nobody"]',
      "expr=request.time <",
    ]);
    const e = errors(r);
    expect(e).toContainEqual(expect.stringMatching(new RegExp(`^26:16: d: ${NO_PREFIX}`)));
    const cel = `${STACK_HEAD}config:
  expr: { type: string }
resources:
  d:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.admin
      members: ["user:v@example.com"]
      condition: { title: t, expression: "\${expr}" }
`;
    expect(errors(load(cel, ["expr=request.time <"]))).toEqual([
      expect.stringMatching(/^14:42: d: condition expression is not valid CEL/),
    ]);
    const expired = load(cel, ["expr=request.time < timestamp('2001-01-01T00:00:00Z')"]);
    expect(expired.stack).toBeDefined();
    expect(expired.diagnostics.map((d) => `${d.severity} ${d.line}:${d.column}`)).toEqual(["warning 14:42"]);
    const typed = `${STACK_HEAD}config:
  who: { type: string }
resources:
  b:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: "\${who}" }
`;
    expect(errors(load(typed, ["who=user:ok@example.com"]))).toEqual([
      expect.stringMatching(/^10:73: b: properties.members must be array/),
    ]);
  });

  it("good inputs load, and two resources granting the same thing from inputs conflict at load", () => {
    const twice = `${STACK_HEAD}config:
  who: { type: string }
resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${who}@example.com" }
  b:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:bob@example.com" }
`;
    expect(errors(load(twice, ["who=ann"]))).toEqual([]);
    expect(errors(load(twice, ["who=bob"]))).toEqual([
      expect.stringMatching(
        /^11:3: resources "a" and "b" both grant user:bob@example.com role roles\/aiplatform.viewer/,
      ),
    ]);
  });

  it("a value that waits on a function result or an input without a value is left to the plan", () => {
    const stack = `${STACK_HEAD}config:
  who: { type: string }
variables:
${lakeVariable()}
resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${lake.labels.owner}" }
  b:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "\${who}" }
`;
    expect(errors(load(stack, ["who=user:x@example.com"]))).toEqual([]);
    expect(errors(load(stack, [], { inputsOptional: true }))).toEqual([]);
  });

  it("a secret input is not quoted in the load error", () => {
    const stack = `${STACK_HEAD}config:
  who: { type: string, secret: true }
resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "\${who}" }
`;
    const r = load(stack, ["who=hush-hush"]);
    expect(errors(r)).toHaveLength(1);
    expect(JSON.stringify(r.diagnostics)).not.toContain("hush-hush");
  });

  it("a secret input that may look like another principal is linted, its characters not spelled out", () => {
    const stack = `${STACK_HEAD}config:
  who: { type: string, secret: true }
resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "\${who}" }
`;
    const r = load(stack, ["who=user:\u0436\u0430lice@example.com"]);
    const found = r.diagnostics.filter((d) => d.code === "lint/lookalike-principal");
    expect(found).toHaveLength(1);
    expect(JSON.stringify(found)).not.toMatch(/\u0436|\u0430|U\+04/);
  });
});

const REFS = `${STACK_HEAD}config:
  empty: { type: list, default: [] }
  later: { type: list }
resources:
  none:
    type: ${MEMBER}
    options: { forEach: "\${empty}" }
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${each.value}" }
  mixed:
    type: ${MEMBER}
    options: { forEach: ["a", "b"] }
    properties: { name: churn, role: roles/aiplatform.user, member: "user:m\${each.key}@example.com" }
  waiting:
    type: ${MEMBER}
    options: { forEach: "\${later}" }
    properties: { name: churn, role: roles/aiplatform.user, member: "user:\${each.value}" }
  ok:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.x0, member: 'user:\${mixed["a"].etag}@example.com' }
`;

const ref = (n: number, text: string) => `  r${n}:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.x${n}, member: 'user:\${${text}}@example.com' }
`;

describe("references to forEach instances are checked when the stack loads", () => {
  it("an instance that does not exist, an index, a forEach's own field: errors at the reference", () => {
    const stack =
      REFS + ref(1, 'mixed["zzz"].etag') + ref(2, 'none["q"].etag') + ref(3, "mixed[5].etag") + ref(4, "mixed.etag");
    const r = load(stack, ['later=["x@example.com"]']);
    expect(errors(r)).toEqual([
      `26:73: "\${mixed["zzz"].etag}": mixed has no instance "zzz"; its instances are "a", "b"`,
      `29:73: "\${none["q"].etag}": none has no instance "q"; it has no instances`,
      `32:73: "\${mixed[5].etag}": mixed has no instance 5; its instances are "a", "b"`,
      `35:73: "\${mixed.etag}": mixed is a forEach resource: name one instance, e.g. mixed["a"]`,
    ]);
  });

  it("an existing instance, the whole forEach, and one whose collection is not known yet are fine", () => {
    const stack = `${REFS}${ref(1, 'waiting["zzz"].etag')}outputs:\n  all: "\${mixed}"\n  one: '\${mixed["b"]}'\n`;
    expect(errors(load(stack, ['later=["x@example.com"]'])).map((e) => e.slice(e.indexOf(" ") + 1))).toEqual([
      `"\${waiting["zzz"].etag}": waiting has no instance "zzz"; its instances are "x@example.com"`,
    ]);
    expect(errors(load(stack, [], { inputsOptional: true }))).toEqual([]);
    expect(errors(load(REFS, ['later=["x@example.com"]']))).toEqual([]);
  });

  it(
    "a list of non-strings is keyed by index, read as its address nums[1] " +
      "or in quotes; an instance's fields are its type's",
    () => {
      const stack =
        `${STACK_HEAD}resources:
  nums:
    type: ${MEMBER}
    options: { forEach: [1, 2] }
    properties: { ` +
        `name: churn, role: "roles/aiplatform.x\${each.value}", member: user:n@example.com }
` +
        `${ref(1, 'nums["0"].etag')}${ref(2, "nums[1].etag")}${ref(3, 'nums["1"].etagg')}` +
        `${ref(4, "nums[2].etag")}${ref(5, "nums[1].etagg")}`;
      expect(errors(load(stack))).toEqual([
        `18:73: "\${nums["1"].etagg}": nums["1"] has no field "etagg"`,
        `21:73: "\${nums[2].etag}": nums has no instance 2; its instances are 0, 1`,
        `24:73: "\${nums[1].etagg}": nums[1] has no field "etagg"`,
      ]);
    },
  );

  it("a number index finds the instance of a map whose key is that number's text (as Terraform converts it)", () => {
    const stack = `${STACK_HEAD}resources:
  ports:
    type: ${MEMBER}
    options: { forEach: { "8080": a, "9090": b } }
    properties: { name: churn, role: "roles/aiplatform.p\${each.key}", member: "user:\${each.value}@example.com" }
${ref(1, "ports[8080].etag")}${ref(2, "ports[80].etag")}`;
    expect(errors(load(stack))).toEqual([
      `15:73: "\${ports[80].etag}": ports has no instance 80; its instances are "8080", "9090"`,
    ]);
  });
});
