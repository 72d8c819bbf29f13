// Bad input (issue 8, item 4).
// Stacks: property-based tests (fast-check) mutate valid stacks at random — in the text and in
// the document — and load them: never an uncaught exception, always a diagnostic with a position
// for an invalid stack, never a network call (loading is pure; a sample also runs `converge plan`
// against an emulator, which must see zero requests when the stack is rejected).
// Emulator: malformed HTTP, wrong methods, malformed and oversized bodies get a 4xx JSON error each
// and the server keeps serving.
import { readFileSync, writeFileSync } from "node:fs";
import { connect, Socket } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { parseDocument, stringify } from "yaml";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadStackFile, parseStack, type LoadResult } from "../../src/config/load.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { validate } from "../../src/schemas/index.js";
import { parseState } from "../../src/state/index.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { LAKE_INVOKER, lakeVariable } from "../fixtures/builders.js";
import { jsonOrUndefined } from "../support/emulator.js";
import {
  BASE_SEED,
  epName,
  recordFigures,
  responses,
  rpName,
  runCli,
  seedWorld,
  size,
  startWorld,
  stats,
  tempDir,
  totalRequests,
} from "./helpers.js";

const CASES = size(1_000, 10_000);
const CLI_SAMPLE = size(6, 60);
const HTTP_CASES = size(200, 2_000);
const STATE_CASES = size(500, 5_000);

const figures = {
  stackCases: 0,
  textMutations: 0,
  documentMutations: 0,
  rejected: 0,
  accepted: 0,
  diagnostics: 0,
  uncaughtExceptions: 0,
  diagnosticsWithoutPosition: 0,
  networkCallsWhileLoading: 0,
  slowestLoadMs: 0,
  cliPlansOfRejectedStacks: 0,
  cliRequestsToEmulator: 0,
  httpBadRequests: 0,
  httpFuzzCases: 0,
  http5xx: 0,
  stateCases: 0,
  stateRejected: 0,
  stateNonUserErrors: 0,
  cliPlansOfCorruptStates: 0,
};
afterAll(
  () =>
    (figures.stackCases || figures.httpFuzzCases || figures.stateCases) &&
    recordFigures("bad-input", { ...figures, losses: 0 }),
);

// --- valid starting stacks -------------------------------------------------------------------

const QUICKSTART =
  `name: quickstart
description: Access to a nightly restore plan and a churn-model endpoint
provider:
  ` +
  `project: my-project
  location: us-central1
variables:
${lakeVariable()}  team: sre
resources:
  ` +
  `restoreViewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: ` +
  `projects/my-project/locations/us-central1/restorePlans/nightly
      role: roles/gkebackup.viewer
      ` +
  `members: ["group:\${team}@example.com", user:alice@example.com]
  restoreAdmins:
    type: ` +
  `cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: ` +
  `roles/gkebackup.admin
      members: [user:oncall@example.com]
      condition:
        title: until-2099
  ` +
  `      description: Temporary on-call access
        expression: request.time < ` +
  `timestamp("2099-01-01T00:00:00Z")
    options:
      protect: true
      ignoreChanges: [members]
` +
  `${LAKE_INVOKER}    options:
      dependsOn: [restoreViewers]
      import: ` +
  `"projects/my-project/locations/us-central1/endpoints/churn roles/aiplatform.user ` +
  `serviceAccount:data-eng@my-project.iam.gserviceaccount.com"
outputs:
  lakeEndpoint: \${lake.endpointUri}
  ` +
  `invokerId: \${invoker.id}
  literal: "cost: $$5"
`;

const FLOW =
  `# a flow-style stack with full names and custom roles
{name: flow, provider: {project: flow-project, ` +
  `location: europe-west1},
 resources: {
   a: {type: "cloudnative:aiplatform/v1beta1:EndpointIamMember", ` +
  `properties: {name: "projects/flow-project/locations/europe-west1/endpoints/e1", role: ` +
  `"projects/flow-project/roles/custom", member: ` +
  `"principal://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/subject/x"}},
   b: ` +
  `{type: "cloudnative:backup/v1:RestorePlanIamBinding", properties: {name: rp, role: ` +
  `"organizations/123/roles/viewer", members: ["domain:example.com", "allAuthenticatedUsers"]}, options: ` +
  `{dependsOn: [a]}}},
 outputs: {aid: "\${a.id}", bmembers: "\${b.members[0]}"}}
`;

function generated(n: number): string {
  const out = ["name: gen", "provider:", "  project: rel-project", "  location: us-central1", "resources:"];
  for (let i = 0; i < n; i++) {
    if (i % 2)
      out.push(
        `  m${i}:`,
        "    type: cloudnative:aiplatform/v1beta1:EndpointIamMember",
        "    properties:",
        `      name: ep-${i % 3}`,
        `      role: roles/rel.invoker${i % 2}`,
        `      member: serviceAccount:sa${i}@rel-project.iam.gserviceaccount.com`,
      );
    else
      out.push(
        `  b${i}:`,
        "    type: cloudnative:backup/v1:RestorePlanIamBinding",
        "    properties:",
        `      name: rp-${i % 3}`,
        `      role: roles/rel.role${i}`,
        `      members: [user:u${i}@example.com, group:g${i}@example.com]`,
      );
  }
  return out.join("\n") + "\n";
}

/** Issue 16's types and functions: whole policies (bindings, a condition, audit configs), the
 *  member and binding types of both objects, getRestorePlanIamPolicy and getEndpointIamPolicy. */
const FAMILY = `name: family
provider:
  project: my-project
  location: us-central1
variables:
  team: sre
  rpPolicy:
    fn::invoke:
      function: cloudnative:backup/v1:getRestorePlanIamPolicy
      arguments: { restorePlanId: weekly, location: us-central1 }
  epPolicy:
    fn::invoke:
      function: cloudnative:aiplatform/v1beta1:getEndpointIamPolicy
      arguments: { endpointId: churn, location: us-central1, project: my-project }
resources:
  nightlyPolicy:
    type: cloudnative:backup/v1:RestorePlanIamPolicy
    properties:
      name: nightly
      bindings:
        - role: roles/gkebackup.viewer
          members: ["group:\${team}@example.com", user:alice@example.com]
        - role: roles/gkebackup.admin
          members: [user:oncall@example.com]
          condition:
            title: until-2099
            description: Temporary on-call access
            expression: request.time < timestamp("2099-01-01T00:00:00Z")
      auditConfigs:
        - service: allServices
          auditLogConfigs:
            - logType: DATA_READ
              exemptedMembers: [user:auditor@example.com]
            - logType: ADMIN_READ
  weeklyMember:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties:
      name: us-central1/weekly
      role: roles/gkebackup.viewer
      member: user:bob@example.com
    options:
      import: "us-central1/weekly roles/gkebackup.viewer user:bob@example.com"
  churnBinding:
    type: cloudnative:aiplatform/v1beta1:EndpointIamBinding
    properties:
      name: churn
      role: "\${epPolicy.bindings[0].role}"
      members: ["serviceAccount:\${team}@my-project.iam.gserviceaccount.com"]
    options:
      dependsOn: [nightlyPolicy]
  scorerPolicy:
    type: cloudnative:aiplatform/v1beta1:EndpointIamPolicy
    properties:
      name: projects/my-project/locations/us-central1/endpoints/scorer
      bindings: []
    options:
      import: projects/my-project/locations/us-central1/endpoints/scorer
outputs:
  weeklyEtag: \${rpPolicy.etag}
  churnRoles: \${epPolicy.bindings}
  policyId: \${nightlyPolicy.id}
`;

const VALID = [QUICKSTART, FLOW, generated(12), FAMILY];

// --- mutations --------------------------------------------------------------------------------

/** Characters that matter to YAML, to interpolation and to member/role syntax. */
const NASTY = [
  ":",
  " ",
  "\n",
  "\t",
  "-",
  "#",
  "{",
  "}",
  "[",
  "]",
  ",",
  "&",
  "*",
  "!",
  "|",
  ">",
  "'",
  '"',
  "%",
  "@",
  "`",
  "$",
  "${",
  "}",
  "$$",
  "${a.",
  "[0]",
  "\\",
  "\u0000",
  "\ufeff",
  "\r",
  "é",
  "🙂",
  "~",
  "null",
  "0x1F",
  "1e999",
  "<<",
  "? ",
  "---",
  "...",
  "*a",
  "&a ",
  "!!binary ",
  "::",
];
const nastyString = fc
  .array(
    fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 6 }), fc.string({ unit: "binary", maxLength: 4 })),
    { maxLength: 8 },
  )
  .map((xs) => xs.join(""));

type TextMutation =
  | { kind: "insert"; at: number; s: string }
  | { kind: "delete"; at: number; len: number }
  | { kind: "replace"; at: number; len: number; s: string }
  | { kind: "truncate"; at: number }
  | { kind: "dupline"; line: number }
  | { kind: "swaplines"; a: number; b: number }
  | { kind: "indent"; line: number; delta: number };

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), s: nastyString }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant("replace" as const),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 12 }),
    s: nastyString,
  }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("dupline" as const), line: fc.nat() }),
  fc.record({ kind: fc.constant("swaplines" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant("indent" as const), line: fc.nat(), delta: fc.integer({ min: -4, max: 4 }) }),
);

function applyText(text: string, m: TextMutation): string {
  const at = (n: number) => n % (text.length + 1);
  const lines = text.split("\n");
  const ln = (n: number) => n % lines.length;
  switch (m.kind) {
    case "insert":
      return text.slice(0, at(m.at)) + m.s + text.slice(at(m.at));
    case "delete":
      return text.slice(0, at(m.at)) + text.slice(at(m.at) + m.len);
    case "replace":
      return text.slice(0, at(m.at)) + m.s + text.slice(at(m.at) + m.len);
    case "truncate":
      return text.slice(0, at(m.at));
    case "dupline":
      lines.splice(ln(m.line), 0, lines[ln(m.line)]!);
      return lines.join("\n");
    case "swaplines": {
      const [a, b] = [ln(m.a), ln(m.b)];
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      return lines.join("\n");
    }
    case "indent": {
      const i = ln(m.line);
      lines[i] =
        m.delta > 0
          ? " ".repeat(m.delta) + lines[i]
          : lines[i]!.slice(Math.min(-m.delta, lines[i]!.length - lines[i]!.trimStart().length));
      return lines.join("\n");
    }
  }
}

type Path = (string | number)[];

/** Every path of a parsed document (objects and arrays), for document-level mutations. */
function paths(v: unknown, base: Path = []): Path[] {
  const out: Path[] = [base];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...base, i])));
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...base, k]));
  return out;
}

const INTERESTING_VALUES: unknown[] = [
  null,
  "",
  " ",
  0,
  -1,
  1.5,
  true,
  [],
  {},
  "x".repeat(5000),
  "${",
  "${}",
  "${undefinedThing}",
  "${restoreViewers.nope}",
  "${invoker}",
  "${lake.backendMetastores[99].name}",
  "${a.b[0].c}",
  "$${literal}",
  "user:",
  "user:UPPER@EXAMPLE.COM",
  "serviceAccount:${team}",
  "allUsers",
  "principalSet://",
  "roles/",
  "roles/owner",
  "projects//roles/x",
  "cloudnative:backup/v2:RestorePlanIamBinding",
  "cloudnative:metastore/v1alpha:getFederation",
  "cloudnative:aiplatform/v1beta1:EndpointIamMember",
  "cloudnative:backup/v1:RestorePlanIamBinding",
  "cloudnative:backup/v1:RestorePlanIamPolicy",
  "cloudnative:backup/v1:RestorePlanIamMember",
  "cloudnative:aiplatform/v1beta1:EndpointIamPolicy",
  "cloudnative:aiplatform/v1beta1:EndpointIamBinding",
  "cloudnative:backup/v1:getRestorePlanIamPolicy",
  "${rpPolicy.bindings}",
  "${epPolicy.bindings[0].members}",
  "${nightlyPolicy.auditConfigs}",
  "DATA_READ",
  "LOG_TYPE_NOPE",
  "projects/my-project/locations/us-central1/restorePlans/nightly",
  "a/b",
  "embedded",
  "http://127.0.0.1:1",
  { "fn::invoke": { function: "cloudnative:metastore/v1alpha:getFederation", arguments: {} } },
  { "fn::invoke": null },
  { title: "t", expression: "request.time <" },
  { title: "", expression: "" },
  { role: "roles/x", members: ["user:a@example.com"] },
  [
    { role: "roles/x", members: ["user:a@example.com"] },
    { role: "roles/x", members: ["bob"] },
  ],
  [
    {
      service: "allServices",
      auditLogConfigs: [{ logType: "DATA_WRITE", exemptedMembers: ["user:a@example.com", "bob"] }],
    },
  ],
  {
    "fn::invoke": { function: "cloudnative:aiplatform/v1beta1:getEndpointIamPolicy", arguments: { endpointId: "a/b" } },
  },
  ["restoreViewers", "restoreViewers"],
  ["invoker"],
  [[[[[]]]]],
];

type DocMutation =
  | { kind: "set"; path: number; value: unknown }
  | { kind: "delete"; path: number }
  | { kind: "rename"; path: number; to: string }
  | { kind: "add"; path: number; key: string; value: unknown }
  | { kind: "interpolate"; path: number; ref: string };

const anyValue = fc.oneof(fc.constantFrom(...INTERESTING_VALUES), fc.jsonValue({ maxDepth: 3 }), nastyString);
const keyArb = fc.oneof(
  fc.constantFrom(
    "name",
    "type",
    "properties",
    "options",
    "members",
    "member",
    "role",
    "condition",
    "bindings",
    "auditConfigs",
    "auditLogConfigs",
    "exemptedMembers",
    "logType",
    "service",
    "restorePlanId",
    "endpointId",
    "dependsOn",
    "protect",
    "import",
    "ignoreChanges",
    "fn::invoke",
    "function",
    "arguments",
    "provider",
    "project",
    "location",
    "endpoint",
    "seed",
    "variables",
    "resources",
    "outputs",
    "lint",
    "nme",
    "resource",
    "__proto__",
    "constructor",
    "toString",
    "0",
    "a b",
    "${x}",
  ),
  nastyString,
);
const docMutation: fc.Arbitrary<DocMutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), path: fc.nat(), value: anyValue }),
  fc.record({ kind: fc.constant("delete" as const), path: fc.nat() }),
  fc.record({ kind: fc.constant("rename" as const), path: fc.nat(), to: keyArb }),
  fc.record({ kind: fc.constant("add" as const), path: fc.nat(), key: keyArb, value: anyValue }),
  fc.record({
    kind: fc.constant("interpolate" as const),
    path: fc.nat(),
    ref: fc.constantFrom(
      "${lake.labels.owner}",
      "${team}",
      "${rpPolicy.etag}",
      "${epPolicy.bindings[0].role}",
      "${nightlyPolicy.bindings}",
      "${restoreViewers.etag}",
      "${invoker.project}",
      "${nope}",
      "${a}",
      "${b.members[0]}",
      "${restoreViewers}",
      "${lake}",
      "${",
      "}${",
    ),
  }),
);

function applyDoc(text: string, muts: DocMutation[]): string {
  const root = parseDocument(text).toJS() as unknown;
  for (const m of muts) {
    const all = paths(root).filter((p) => p.length > 0);
    if (!all.length) break;
    const p = all[m.path % all.length]!;
    const parent = p.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], root) as
      Record<string | number, unknown> | unknown[];
    const last = p[p.length - 1]!;
    const cur = (parent as Record<string | number, unknown>)[last];
    switch (m.kind) {
      case "set":
        (parent as Record<string | number, unknown>)[last] = structuredClone(m.value);
        break;
      case "delete":
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last as string];
        break;
      case "rename":
        if (!Array.isArray(parent)) {
          delete parent[last as string];
          Object.defineProperty(parent, m.to, { value: cur, enumerable: true, writable: true, configurable: true });
        }
        break;
      case "add":
        if (cur && typeof cur === "object" && !Array.isArray(cur))
          Object.defineProperty(cur, m.key, {
            value: structuredClone(m.value),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else if (Array.isArray(cur)) cur.push(structuredClone(m.value));
        break;
      case "interpolate":
        if (typeof cur === "string")
          (parent as Record<string | number, unknown>)[last] =
            cur.slice(0, cur.length >> 1) + m.ref + cur.slice(cur.length >> 1);
        break;
    }
  }
  return stringify(root, { aliasDuplicateObjects: false });
}

const stackCase = fc.oneof(
  fc.record({
    how: fc.constant("text" as const),
    base: fc.nat({ max: VALID.length - 1 }),
    muts: fc.array(textMutation, { minLength: 1, maxLength: 4 }),
  }),
  fc.record({
    how: fc.constant("doc" as const),
    base: fc.nat({ max: VALID.length - 1 }),
    muts: fc.array(docMutation, { minLength: 1, maxLength: 4 }),
  }),
  fc.record({
    how: fc.constant("both" as const),
    base: fc.nat({ max: VALID.length - 1 }),
    doc: fc.array(docMutation, { minLength: 1, maxLength: 3 }),
    muts: fc.array(textMutation, { minLength: 1, maxLength: 2 }),
  }),
);
type StackCase = typeof stackCase extends fc.Arbitrary<infer T> ? T : never;

function render(c: StackCase): string {
  const base = VALID[c.base]!;
  if (c.how === "text") return c.muts.reduce(applyText, base);
  if (c.how === "doc") return applyDoc(base, c.muts);
  return c.muts.reduce(applyText, applyDoc(base, c.doc));
}

/** What every load result must satisfy; returns the problems (empty = fine). */
function problems(text: string, file: string, r: LoadResult): string[] {
  const out: string[] = [];
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  if (!r.stack && errors.length === 0) out.push("rejected without an error diagnostic");
  if (r.stack && errors.length > 0) out.push("accepted with error diagnostics");
  const lineCount = text.split(/\r\n|\r|\n/).length;
  for (const d of errors) {
    const ok =
      d.file === file &&
      Number.isInteger(d.line) &&
      Number.isInteger(d.column) &&
      d.line! >= 1 &&
      d.column! >= 1 &&
      d.line! <= lineCount + 1;
    if (!ok)
      out.push(
        `diagnostic without a valid position (file ${d.file}, line ${d.line}, column ${d.column}): ${d.summary}`,
      );
    if (typeof d.summary !== "string" || d.summary.trim() === "")
      out.push(`empty summary: ${JSON.stringify(d.summary)}`);
  }
  return out;
}

// --- network tripwire ---------------------------------------------------------------------------

let networkCalls: string[] = [];
const realFetch = globalThis.fetch;
const realConnect = Socket.prototype.connect;

function armTripwire(): void {
  networkCalls = [];
  globalThis.fetch = ((input: unknown) => {
    networkCalls.push(`fetch ${String(input)}`);
    return Promise.reject(new Error("network call while loading a stack"));
  }) as typeof fetch;
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    networkCalls.push(`connect ${JSON.stringify(args[0])}`);
    throw new Error("network call while loading a stack");
  } as typeof Socket.prototype.connect;
}
function disarmTripwire(): void {
  globalThis.fetch = realFetch;
  Socket.prototype.connect = realConnect;
}

// --- stacks -----------------------------------------------------------------------------------

describe(`stacks mutated at random (${CASES} fast-check cases)`, () => {
  it("the starting stacks are valid", () => {
    for (const s of VALID) {
      const r = parseStack("/work/stack.yaml", s);
      expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      expect(r.stack).toBeDefined();
    }
  });

  it("loading never throws, rejects with positioned diagnostics, never touches the network", () => {
    const file = "/virtual/stack.yaml";
    armTripwire();
    try {
      fc.assert(
        fc.property(stackCase, (c) => {
          const text = render(c);
          figures.stackCases++;
          if (c.how === "text") figures.textMutations += c.muts.length;
          else if (c.how === "doc") figures.documentMutations += c.muts.length;
          else {
            figures.documentMutations += c.doc.length;
            figures.textMutations += c.muts.length;
          }
          const t0 = performance.now();
          let r: LoadResult;
          try {
            r = parseStack(file, text);
          } catch (e) {
            figures.uncaughtExceptions++;
            throw new Error(`parseStack threw ${(e as Error)?.stack ?? String(e)}\n--- stack\n${text}`);
          }
          figures.slowestLoadMs = Math.max(figures.slowestLoadMs, Math.round(performance.now() - t0));
          figures.diagnostics += r.diagnostics.length;
          if (r.stack) figures.accepted++;
          else figures.rejected++;
          const p = problems(text, file, r);
          figures.diagnosticsWithoutPosition += p.filter((x) => x.startsWith("diagnostic without")).length;
          figures.networkCallsWhileLoading += networkCalls.length;
          if (networkCalls.length) throw new Error(`network calls while loading: ${networkCalls.join(", ")}`);
          if (p.length) throw new Error(`${p.join("\n")}\n--- stack\n${text}`);
        }),
        { numRuns: CASES, seed: BASE_SEED, verbose: false },
      );
    } finally {
      disarmTripwire();
    }
    expect(figures.rejected).toBeGreaterThan(CASES / 4);
  }, 900_000);

  it("loadStackFile (the file-reading entry point) agrees with parseStack on a sample", async () => {
    const { dir, remove } = await tempDir();
    try {
      const cases = fc.sample(stackCase, { numRuns: size(50, 500), seed: BASE_SEED + 1 });
      for (const c of cases) {
        const text = render(c);
        const file = join(dir, "stack.yaml");
        writeFileSync(file, text);
        const r = loadStackFile(file);
        expect(problems(text, file, r)).toEqual([]);
        expect(!!r.stack).toBe(!!parseStack(file, text).stack);
      }
    } finally {
      await remove();
    }
  }, 300_000);
});

describe("diagnostics say what is wrong", () => {
  // Found by the mutations above: a value of the wrong type, or a badly named variable/resource,
  // also produces a second diagnostic that prints the value as "[object Object]".
  const cases: [string, string][] = [
    [
      "a member that is a map",
      "name: s\nprovider: {project: my-project, location: us-central1}\nresources:\n  r:\n    type: " +
        "cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n      name: nightly\n      role: " +
        "roles/x\n      members: [{a: 1}]\n",
    ],
    [
      "a role that is a map",
      "name: s\nprovider: {project: my-project, location: us-central1}\nresources:\n  r:\n    type: " +
        "cloudnative:aiplatform/v1beta1:EndpointIamMember\n    properties:\n      name: churn\n      role: {x: " +
        "1}\n      member: user:a@example.com\n",
    ],
    ["a variable name with a space", 'name: s\nvariables:\n  "a b": 1\n'],
    [
      "a resource name starting with a digit",
      'name: s\nresources:\n  "9x":\n    type: cloudnative:backup/v1:RestorePlanIamBinding\n    properties: ' +
        "{name: projects/my-project/locations/l/restorePlans/x, role: roles/x, members: []}\n",
    ],
  ];
  for (const [what, text] of cases) {
    it(`${what}: no diagnostic prints "[object Object]"`, () => {
      const r = parseStack("/virtual/stack.yaml", text);
      expect(r.stack).toBeUndefined();
      expect(r.diagnostics.length).toBeGreaterThan(0);
      expect(r.diagnostics.map((d) => d.summary).filter((s) => s.includes("[object Object]"))).toEqual([]);
    });
  }
});

describe(`converge plan on rejected stacks (${CLI_SAMPLE} sampled)`, () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startWorld(seedWorld());
  });
  afterAll(() => emu.close());

  it("exits 1 with file:line:column diagnostics and sends no request", async () => {
    const { dir, remove } = await tempDir();
    try {
      const rejected = fc
        .sample(stackCase, { numRuns: CLI_SAMPLE * 8, seed: BASE_SEED + 2 })
        .map(render)
        .filter((t) => !parseStack(join(dir, "stack.yaml"), t).stack)
        .slice(0, CLI_SAMPLE);
      expect(rejected.length).toBe(CLI_SAMPLE);
      for (const text of rejected) {
        writeFileSync(join(dir, "stack.yaml"), text);
        const before = totalRequests(await stats(emu));
        const r = await runCli(["plan", "-f", "stack.yaml"], { cwd: dir, emulator: emu });
        figures.cliPlansOfRejectedStacks++;
        const sent = totalRequests(await stats(emu)) - before;
        figures.cliRequestsToEmulator += sent;
        const what = `--- stack\n${text}\n--- stderr\n${r.stderr}`;
        expect(r.code, what).toBe(1);
        expect(sent, what).toBe(0);
        expect(r.stderr, what).toMatch(/stack\.yaml:\d+:\d+: Error: /);
        expect(r.stderr, what).not.toMatch(/internal error|this is a bug|\n\s+at .*:\d+:\d+\)?\n/);
      }
    } finally {
      await remove();
    }
  }, 600_000);
});

// --- state files ------------------------------------------------------------------------------

describe(`state files mutated at random (${STATE_CASES} fast-check cases)`, () => {
  let emu: RunningEmulator;
  let work: { dir: string; remove: () => Promise<void> };
  let stateText = "";
  const STACK = generated(8);
  beforeAll(async () => {
    emu = await startWorld(seedWorld());
    work = await tempDir();
    writeFileSync(join(work.dir, "stack.yaml"), STACK);
    const r = await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: work.dir, emulator: emu });
    if (r.code !== 0) throw new Error(`setup apply failed: ${r.stderr}`);
    stateText = readFileSync(join(work.dir, "state", "gen.json"), "utf8");
  }, 120_000);
  afterAll(async () => {
    await emu.close();
    await work.remove();
  });

  const stateCase = fc.oneof(
    fc.record({ how: fc.constant("text" as const), muts: fc.array(textMutation, { minLength: 1, maxLength: 3 }) }),
    fc.record({ how: fc.constant("doc" as const), muts: fc.array(docMutation, { minLength: 1, maxLength: 3 }) }),
  );
  const renderState = (c: { how: "text" | "doc"; muts: unknown[] }) =>
    c.how === "text"
      ? (c.muts as TextMutation[]).reduce(applyText, stateText)
      : JSON.stringify(parseDocument(applyDoc(stateText, c.muts as DocMutation[])).toJS(), null, 2) + "\n";

  it("parseState returns a valid state or throws a UserError naming the file, nothing else", () => {
    const file = "/virtual/state/gen.json";
    fc.assert(
      fc.property(stateCase, (c) => {
        const text = renderState(c);
        figures.stateCases++;
        try {
          const st = parseState(text, file);
          expect(validate("state.schema.json", st)).toEqual([]);
        } catch (e) {
          if (!(e instanceof UserError)) {
            figures.stateNonUserErrors++;
            throw new Error(`parseState threw ${(e as Error)?.stack ?? String(e)}\n--- state\n${text.slice(0, 2000)}`);
          }
          figures.stateRejected++;
          expect(e.diagnostics[0]?.summary).toContain(file);
        }
      }),
      { numRuns: STATE_CASES, seed: BASE_SEED + 5 },
    );
  }, 600_000);

  it("converge plan with a corrupt state: exit 1 naming the state file, no request, no stack trace", async () => {
    const corrupt = fc
      .sample(stateCase, { numRuns: 200, seed: BASE_SEED + 6 })
      .map(renderState)
      .filter((t) => {
        try {
          parseState(t, "x");
          return false;
        } catch {
          return true;
        }
      })
      .slice(0, CLI_SAMPLE);
    for (const text of corrupt) {
      writeFileSync(join(work.dir, "state", "gen.json"), text);
      const before = totalRequests(await stats(emu));
      const r = await runCli(["plan", "-f", "stack.yaml"], { cwd: work.dir, emulator: emu });
      figures.cliPlansOfCorruptStates++;
      const what = `--- state\n${text.slice(0, 1000)}\n--- stderr\n${r.stderr}`;
      expect(r.code, what).toBe(1);
      expect(r.stderr, what).toContain("gen.json");
      expect(r.stderr, what).not.toMatch(/internal error|this is a bug/);
      expect(totalRequests(await stats(emu)) - before, what).toBe(0);
    }
  }, 300_000);
});

// --- the emulator -----------------------------------------------------------------------------

function raw(port: number, payload: string | Buffer, waitMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1", () => s.end(payload));
    let out = "";
    s.setEncoding("latin1");
    s.on("data", (d: string) => (out += d));
    const done = () => resolve(out);
    s.on("end", done);
    s.on("close", done);
    s.on("error", done);
    setTimeout(() => {
      s.destroy();
      done();
    }, waitMs).unref();
  });
}

function parseRaw(text: string): { status: number; body: unknown } {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  const i = text.indexOf("\r\n\r\n");
  let body: unknown;
  try {
    body = JSON.parse(text.slice(i + 4));
  } catch {
    body = undefined;
  }
  return { status: m ? Number(m[1]) : 0, body };
}

function expect4xxJson(status: number, body: unknown, what: string): void {
  expect(status, what).toBeGreaterThanOrEqual(400);
  expect(status, what).toBeLessThan(500);
  const e = (body as { error?: { code?: number; status?: string; message?: string } } | undefined)?.error;
  expect(e, `${what}: a JSON error envelope`).toBeDefined();
  expect(e!.code, what).toBe(status);
  expect(typeof e!.status, what).toBe("string");
  expect(typeof e!.message, what).toBe("string");
}

describe("the emulator refuses bad requests with 4xx JSON and keeps serving", () => {
  let emu: RunningEmulator;
  const RP = rpName(0);
  const EP = epName(0);
  beforeEach(async () => {
    emu = await startWorld(seedWorld());
  });
  afterEach(() => emu.close());

  async function stillServing(): Promise<void> {
    const r = await fetch(`${emu.url}/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`);
    expect(r.status).toBe(200);
    expect(typeof ((await r.json()) as { etag?: unknown }).etag).toBe("string");
  }

  async function send(
    method: string,
    path: string,
    body?: string | Uint8Array,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    const res = await fetch(emu.url + path, {
      method,
      ...(body !== undefined ? { body } : {}),
      headers: { "Content-Type": "application/json", ...headers },
    });
    return { status: res.status, body: jsonOrUndefined(await res.text()) };
  }

  it("malformed HTTP on a raw socket: 400 JSON, then the server still answers", async () => {
    const setPath = `/v1/${RP}:setIamPolicy`;
    // The emulator's own Host: any other is refused (403) before the request is parsed further.
    const x = emu.hostPort;
    const payloads: [string, string | Buffer][] = [
      ["garbage", "GARBAGE\r\n\r\n"],
      ["binary", Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10])],
      ["HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
      ["bad version", `GET /v1/${RP}:getIamPolicy HTTP/9.9\r\nHost: ${x}\r\n\r\n`],
      ["bad header", `GET /v1/${RP}:getIamPolicy HTTP/1.1\r\nHost: ${x}\r\nBad Header\r\n\r\n`],
      ["bad content-length", `POST ${setPath} HTTP/1.1\r\nHost: ${x}\r\nContent-Length: abc\r\n\r\n{}`],
      [
        "two content-lengths",
        `POST ${setPath} HTTP/1.1\r\nHost: ${x}\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}`,
      ],
      [
        "bad chunk",
        `POST ${setPath} HTTP/1.1\r\nHost: ${x}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ],
      ["huge header", `GET /v1/${RP}:getIamPolicy HTTP/1.1\r\nHost: ${x}\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`],
      ["space in path", `GET /v1/a b HTTP/1.1\r\nHost: ${x}\r\n\r\n`],
      ["bad percent-encoding", `GET /v1/%ZZ:getIamPolicy HTTP/1.1\r\nHost: ${x}\r\nConnection: close\r\n\r\n`],
      [
        "truncated JSON body",
        `POST ${setPath} HTTP/1.1\r\nHost: ${x}\r\nContent-Type: ` +
          `application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{"policy":`,
      ],
    ];
    for (const [what, p] of payloads) {
      const { status, body } = parseRaw(await raw(emu.port, p));
      figures.httpBadRequests++;
      expect4xxJson(status, body, what);
      await stillServing();
    }
  }, 60_000);

  it("wrong methods on every API path: 4xx JSON", async () => {
    const paths: [string, string[]][] = [
      [`/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`, ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]],
      [`/v1/${RP}:setIamPolicy`, ["GET", "PUT", "DELETE", "PATCH"]],
      [`/v1beta1/${EP}:getIamPolicy?options.requestedPolicyVersion=3`, ["GET", "PUT", "DELETE"]],
      [`/v1beta1/${EP}:setIamPolicy`, ["GET", "PUT", "DELETE", "PATCH"]],
      [`/v1alpha/projects/rel-project/locations/us-central1/federations/lake`, ["POST", "PUT", "DELETE", "PATCH"]],
      ["/__emulator/stats", ["DELETE", "PUT"]],
      ["/__emulator/faults", ["PATCH"]],
    ];
    for (const [path, methods] of paths) {
      for (const m of methods) {
        const r = await send(m, path, m === "GET" ? undefined : "{}");
        figures.httpBadRequests++;
        expect4xxJson(r.status, r.body, `${m} ${path}`);
      }
    }
    // HEAD has no body, but still a 4xx.
    const head = await fetch(`${emu.url}/v1/${RP}:setIamPolicy`, { method: "HEAD" });
    expect(head.status).toBeGreaterThanOrEqual(400);
    expect(head.status).toBeLessThan(500);
    await stillServing();
  }, 60_000);

  it("oversized and malformed policies: 4xx JSON, the stored policy untouched", async () => {
    const before = await (await fetch(`${emu.url}/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`)).json();
    const members = (n: number, p = "u") => Array.from({ length: n }, (_, i) => `user:${p}${i}@example.com`);
    const deep = "[".repeat(200_000) + "]".repeat(200_000);
    const cases: [string, string | Uint8Array][] = [
      ["1501 principals", JSON.stringify({ policy: { bindings: [{ role: "roles/x", members: members(1501) }] } })],
      [
        "1501 principals over many bindings",
        JSON.stringify({
          policy: {
            bindings: Array.from({ length: 51 }, (_, i) => ({ role: `roles/r${i}`, members: members(30, `b${i}-`) })),
          },
        }),
      ],
      ["a 9 MiB body", new Uint8Array(9 * 1024 * 1024).fill(0x20)],
      ["200 000 nested arrays", `{"policy":{"bindings":${deep}}}`],
      ["nested arrays in an unknown field", `{"policy":{},"updateMask":${deep}}`],
      ["not JSON", "{policy:"],
      ["JSON array", "[]"],
      ["JSON string", '"policy"'],
      ["null policy", '{"policy":null}'],
      ["policy as a list", '{"policy":[]}'],
      ["bindings as an object", '{"policy":{"bindings":{"role":"roles/x"}}}'],
      ["members not strings", '{"policy":{"bindings":[{"role":"roles/x","members":[1,2]}]}}'],
      ["bad member", '{"policy":{"bindings":[{"role":"roles/x","members":["bob"]}]}}'],
      ["bad role", '{"policy":{"bindings":[{"role":"admin","members":["user:a@example.com"]}]}}'],
      ["version 2", '{"policy":{"version":2,"bindings":[]}}'],
      [
        "condition without version 3",
        '{"policy":{"version":1,"bindings":[{"role":"roles/x","members":["user:a@example.com"],' +
          '"condition":{"title":"t","expression":"true"}}]}}',
      ],
      ["etag not base64", '{"policy":{"bindings":[],"etag":"%%%"}}'],
      ["stale etag", '{"policy":{"bindings":[],"etag":"AAAAAAAAAAA="}}'],
      ["unknown top-level field", '{"policy":{"bindings":[]},"bogus":1}'],
      ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
      ["a lone surrogate", '{"policy":{"bindings":[{"role":"roles/x","members":["user:\\ud800@example.com"]}]}}'],
    ];
    for (const [what, body] of cases) {
      for (const path of [`/v1/${RP}:setIamPolicy`, `/v1beta1/${EP}:setIamPolicy`]) {
        const r = await send("POST", path, body);
        figures.httpBadRequests++;
        expect4xxJson(r.status, r.body, `${what} → ${path}`);
      }
      await stillServing();
    }
    const after = await (await fetch(`${emu.url}/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`)).json();
    expect(after).toEqual(before);
    expect(responses(await stats(emu), "INTERNAL")).toBe(0);
  }, 120_000);

  it(`random bodies and paths (${HTTP_CASES} fast-check cases): never a 5xx, always JSON`, async () => {
    const pathArb = fc.oneof(
      fc.constantFrom(
        `/v1/${RP}:setIamPolicy`,
        `/v1beta1/${EP}:setIamPolicy`,
        `/v1beta1/${EP}:getIamPolicy`,
        "/__emulator/objects",
        `/__emulator/projects/p1`,
        "/__emulator/nope",
      ),
      fc.string({ maxLength: 40 }).map((s) => `/v1/${encodeURIComponent(s)}`),
      fc.constantFrom(
        `/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=`,
        `/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=99`,
        `/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3&options.requestedPolicyVersion=1`,
      ),
    );
    const bodyArb = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify({ policy: v })),
      fc
        .record(
          {
            bindings: fc.array(
              fc.record({
                role: fc.oneof(fc.string(), fc.constant("roles/x")),
                members: fc.array(fc.oneof(fc.string(), fc.constant("user:a@example.com")), { maxLength: 3 }),
              }),
              { maxLength: 3 },
            ),
            version: fc.oneof(fc.integer({ min: -1, max: 4 }), fc.string()),
          },
          { requiredKeys: [] },
        )
        .map((p) => JSON.stringify({ policy: p })),
      fc.string({ maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE"),
        pathArb,
        bodyArb,
        async (method, path, body) => {
          figures.httpFuzzCases++;
          const r = await send(method, path, method === "GET" ? undefined : body);
          if (r.status >= 500) figures.http5xx++;
          expect(r.status, `${method} ${path} ${body}`).toBeLessThan(500);
          expect(r.body, `${method} ${path} ${body}: JSON`).toBeDefined();
          if (r.status >= 400) expect4xxJson(r.status, r.body, `${method} ${path} ${body}`);
        },
      ),
      { numRuns: HTTP_CASES, seed: BASE_SEED + 4 },
    );
    await stillServing();
  }, 600_000);
});
