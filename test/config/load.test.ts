// Stack loading beyond the malformed fixtures: what a valid stack becomes, and the checks that
// need a particular combination of declarations.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadStackFile, parseStack } from "../../src/config/load.js";
import { lakeVariable, STACK_HEAD } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";
const errorsOf = (text: string) => parseStack(FILE, text).diagnostics.filter((d) => d.severity === "error");

describe("a valid stack", () => {
  const text = `${STACK_HEAD}variables:
${lakeVariable()}  suffix: iam.gserviceaccount.com
resources:
  invoker:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties:
      name: churn
      role: roles/aiplatform.user
      member: serviceAccount:\${lake.labels.owner}@my-project.\${suffix}
    options: { dependsOn: [viewers] }
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:alice@example.com]
outputs:
  invokerId: \${invoker.id}
  price: "costs $$5 and $\${notARef}"
`;
  const r = parseStack(FILE, text);

  it("loads with no diagnostics", () => {
    expect(r.diagnostics).toEqual([]);
    expect(r.stack).toBeDefined();
  });

  it("keeps the stack's name, provider defaults and declarations", () => {
    const s = r.stack!;
    expect(s.name).toBe("t");
    expect(s.provider).toEqual({ project: "my-project", location: "us-central1", endpoint: "google" });
    expect([...s.variables.keys()]).toEqual(["lake", "suffix"]);
    expect([...s.resources.keys()]).toEqual(["invoker", "viewers"]);
    expect([...s.outputs.keys()]).toEqual(["invokerId", "price"]);
    expect(s.resources.get("invoker")!.options).toEqual({ dependsOn: ["viewers"], protect: false, ignoreChanges: [] });
  });

  it("builds the graph from references and dependsOn, and orders dependencies first", () => {
    const s = r.stack!;
    expect(s.graph.dependencies("invoker").sort()).toEqual(["lake", "suffix", "viewers"]);
    const pos = (n: string) => s.order.indexOf(n);
    expect(pos("lake")).toBeLessThan(pos("invoker"));
    expect(pos("suffix")).toBeLessThan(pos("invoker"));
    expect(pos("viewers")).toBeLessThan(pos("invoker"));
    expect(s.order.sort()).toEqual(["invoker", "lake", "suffix", "viewers"]);
  });

  it("does not treat $$-escaped text as a reference", () => {
    expect(r.stack!.outputs.get("price")!.refs).toEqual([]);
    expect(r.stack!.outputs.get("invokerId")!.refs.map((x) => x.root)).toEqual(["invoker"]);
  });
});

describe("checks that combine declarations", () => {
  it("accepts a conditional and an unconditional binding of the same role (different bindings)", () => {
    expect(
      errorsOf(`${STACK_HEAD}resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:a@example.com] }
  b:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:b@example.com]
      condition: { title: t, expression: "true" }
`),
    ).toEqual([]);
  });

  it("reports two bindings with the same condition as duplicates, naming both", () => {
    const errs = errorsOf(
      `${STACK_HEAD}resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { ` +
        `name: nightly, role: roles/x, members: [user:a@example.com], condition: { title: t, expression: "true" ` +
        `} }
  b:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: ` +
        `us-central1/nightly, role: roles/x, members: [user:b@example.com], condition: { title: t, expression: ` +
        `"true" } }
`,
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain('"a" and "b"');
    expect(errs[0]!.summary).toContain('condition "t"');
    expect([errs[0]!.line, errs[0]!.column]).toEqual([9, 3]);
  });

  it("defers member and role form checks of interpolated values to plan time", () => {
    expect(
      errorsOf(`${STACK_HEAD}variables:
  who: alice
resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: "roles/\${who}", members: ["user:\${who}@example.com"] }
`),
    ).toEqual([]);
  });

  it("rejects a name used both as a variable and as a resource", () => {
    const errs = errorsOf(`${STACK_HEAD}variables:
  a: x
resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: roles/x, members: [] }
`);
    expect(errs.map((e) => e.summary)).toContainEqual(
      expect.stringContaining('"a" is declared both as a variable and as a resource'),
    );
    expect(errs[0]).toMatchObject({ line: 6, column: 3, path: "variables.a" });
  });

  it("rejects a resource that refers to itself", () => {
    const errs = errorsOf(`${STACK_HEAD}resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: roles/x, members: ["user:\${a.etag}@x.com"] }
`);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain('"a" refers to itself');
  });

  it("reports a three-node cycle through references and dependsOn with its path", () => {
    const errs = errorsOf(`${STACK_HEAD}variables:
  v: \${c.id}
resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: "roles/\${v}", members: [] }
  c:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties: { name: churn, role: roles/x, member: user:x@example.com }
    options: { dependsOn: [a] }
`);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toMatch(/^dependency cycle: (v -> c -> a -> v|a -> v -> c -> a|c -> a -> v -> c)$/);
  });

  it("says a function token is not a resource type", () => {
    const errs = errorsOf(`${STACK_HEAD}resources:
  a:
    type: cloudnative:metastore/v1alpha:getFederation
    properties: {}
`);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain("is a function, not a resource type");
    expect([errs[0]!.line, errs[0]!.column]).toEqual([7, 11]);
  });

  it("rejects ignoreChanges naming something that is not an input", () => {
    const errs = errorsOf(`${STACK_HEAD}resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: roles/x, members: [] }
    options: { ignoreChanges: [members, etag] }
`);
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ line: 9, column: 41, path: "resources.a.options.ignoreChanges[1]" });
    expect(errs[0]!.summary).toContain('ignoreChanges names "etag"');
  });

  it("rejects provider.seed unless the endpoint is embedded", () => {
    const errs = errorsOf(`name: t
provider: { project: p-123456, seed: cloud.seed.yaml }
`);
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ line: 2, column: 38, path: "provider.seed" });
  });

  it("reports a duplicate YAML key at the second key", () => {
    const errs = errorsOf(`name: t\nname: u\n`);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain("YAML syntax error");
    expect([errs[0]!.line, errs[0]!.column]).toEqual([2, 1]);
  });

  it("rejects a document that is not a mapping", () => {
    const errs = errorsOf(`- just\n- a list\n`);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain("must be a YAML mapping");
  });

  it("never suggests, for an unknown dependsOn entry, the resource itself", () => {
    // "nobody" is closest to "invoker" by edit distance; suggesting the resource itself would
    // lead straight to "invoker depends on itself".
    const errs = errorsOf(`${STACK_HEAD}resources:
  invoker:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties: { name: churn, role: roles/x, member: user:x@example.com }
    options: { dependsOn: [nobody] }
`);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain('dependsOn names "nobody"');
    expect(errs[0]!.summary).not.toContain('did you mean "invoker"');
  });
});

describe("positions inside quoted strings", () => {
  const member = (m: string) => `${STACK_HEAD}resources:
  a:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties:
      name: churn
      role: roles/x
      member: ${m}
`;
  // "      member: " is 14 characters: the value starts at column 15.
  it.each([
    ["plain", "user:${nope.x}", 20],
    ["double-quoted", '"user:${nope.x}"', 21],
    ["double-quoted with an escape before the ${", '"user:\\u00e9${nope.x}"', 27],
    ["single-quoted with a doubled quote before the ${", "'user:''${nope.x}'", 23],
  ])("points at the ${ of an undefined reference in a %s scalar", (_kind, value, column) => {
    const errs = errorsOf(member(value));
    expect(errs).toHaveLength(1);
    expect(errs[0]!.summary).toContain('undefined reference "${nope.x}"');
    expect([errs[0]!.line, errs[0]!.column]).toEqual([11, column]);
  });

  it.each(["constructor", "toString", "__proto__"])(
    "a reference to %s (a name every JavaScript object has) is undefined",
    (name) => {
      const errs = errorsOf(member(`user:\${${name}}@example.com`));
      expect(errs.map((e) => e.summary)).toEqual([
        `undefined reference "\${${name}}": no variable or resource is named "${name}"`,
      ]);
    },
  );
});

describe("loadStackFile", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "converge-load-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("reports a missing stack file without a position", () => {
    const r = loadStackFile(join(dir, "nope.yaml"));
    expect(r.stack).toBeUndefined();
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]!.summary).toContain("does not exist");
  });

  it("resolves provider.seed relative to the stack and reports a missing seed at provider.seed", async () => {
    const file = join(dir, "stack.yaml");
    await writeFile(file, "name: t\nprovider:\n  endpoint: embedded\n  seed: world.yaml\n");
    const missing = loadStackFile(file);
    expect(missing.stack).toBeUndefined();
    expect(missing.diagnostics).toHaveLength(1);
    expect(missing.diagnostics[0]).toMatchObject({ file, line: 4, column: 9, path: "provider.seed" });
    await writeFile(join(dir, "world.yaml"), "projects: {}\n");
    const ok = loadStackFile(file);
    expect(ok.diagnostics).toEqual([]);
    expect(ok.stack!.provider.seed).toBe(join(dir, "world.yaml"));
  });
});

// Issue 12, class 1: only values that are resolved may defer their checks to plan time.
describe("${…} where nothing is resolved", () => {
  it.each([
    [
      "the stack name",
      'name: "x-${y}"\n',
      "1:7",
      'name: "x-${y}" is not of the expected form: it must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$',
    ],
    [
      "a stack name with a NUL",
      'name: "t${y}\\0"\n',
      "1:7",
      'name: "t${y}\\u0000" is not of the expected form: it must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$',
    ],
    [
      "provider.endpoint",
      'name: t\nprovider:\n  endpoint: "${where}"\n',
      "3:13",
      'provider.endpoint: "${where}" is not of the expected form: it must match ^(google|embedded|https?://.+)$',
    ],
  ])("%s is checked as written", (_, text, at, summary) => {
    expect(errorsOf(text).map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([`${at} ${summary}`]);
  });

  it("a resource property still waits for its value", () => {
    const text =
      `${STACK_HEAD}variables:\n  who: user:ana@example.com\nresources:\n  g:\n    type: ` +
      `cloudnative:aiplatform/v1beta1:EndpointIamMember\n    properties: { name: churn, role: ` +
      `roles/aiplatform.user, member: "\${who}" }\n`;
    expect(errorsOf(text)).toEqual([]);
  });
});
