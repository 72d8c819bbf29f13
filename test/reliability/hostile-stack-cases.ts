// Hostile stacks for the bad-input fuzzer (issue 12): valid stacks (a model of their sections,
// rendered to YAML by hand so that raw YAML such as aliases and deep nesting can be injected)
// mutated with the classes of hostile material issue 12 lists: `${…}`, NUL and `../` in names,
// undefined aliases, alias bombs, deep nesting, bytes that are not UTF-8, names every JavaScript
// object inherits as variable/output/resource/lint names, conditions Google refuses, more than
// 1,500 principals on a policy, huge strings, bad references and wrong types. Every IAM type of
// issue 16 is in the mix: whole-policy resources (bindings, audit configs), the member and binding
// types of both objects, the getRestorePlanIamPolicy/getEndpointIamPolicy functions, and
// resources added on objects the stack already manages (conflicts).
import fc from "fast-check";
import type { Policy } from "../../src/generated/schemas.js";
import {
  BINDING,
  EP,
  FED,
  GET_FEDERATION,
  LAKE,
  MEMBER,
  RP,
  epName,
  rpName,
  type FakeWorld,
} from "../fixtures/builders.js";

/** Names every object inherits (Object.prototype), and a few that functions and arrays have. */
export const INHERITED = [
  ...Object.getOwnPropertyNames(Object.prototype),
  "length",
  "name",
  "prototype",
  "call",
  "apply",
  "bind",
  "push",
  "then",
];

/** Names with interpolation, NUL, path traversal, spaces, nothing at all. */
const NASTY_NAMES = [
  "${x}",
  "a\u0000b",
  "../x",
  "../../etc/passwd",
  "a/b",
  "",
  " ",
  "a.b",
  "0",
  "9x",
  "a b",
  "é",
  "${",
  "$${x}",
  "x".repeat(300),
  "..",
  ".",
  "-x",
  "a\nb",
  "\u202e",
  "\u001b[2J",
];

/** What a stack `name:` may be set to (a YAML scalar is written with JSON quoting). */
const STACK_NAMES = [
  "../../x-${y}",
  "t-${y}\u0000",
  "${y}",
  "../x",
  "/",
  "a/b",
  "..",
  ".",
  "",
  "t\u0000",
  "x".repeat(2000),
  "__proto__",
  "constructor",
  "t\u001b]0;pwned\u0007",
  "CON",
  "t.json",
  "-t",
];

/** Values for properties, by property: the interesting spellings issue 12 is about. */
const PROP_VALUES: Record<string, string[]> = {
  name: [
    "../../etc/passwd",
    "projects/../../x",
    "nightly\u0000",
    "${y}",
    "projects/my-project/locations/us-central1/restorePlans/${team}",
    "projects/my-project/locations/us-central1/restorePlans/../../../x",
    "projects//locations//restorePlans/",
    "${lake.labels.owner}",
    "${__proto__}",
    "constructor",
    "é",
    "a".repeat(100_000),
  ],
  role: [
    "roles/",
    "roles/${team}",
    "roles/owner",
    "roles/viewer",
    "projects/my-project/roles/${lake.labels.owner}",
    "roles/\u0000",
    "roles/a\u202eb",
    "${toString}",
    "organizations/1/roles/x",
    "r".repeat(10_000),
  ],
  member: [
    "user:${nope}@example.com",
    "user:a@example.com\u0000",
    "allUsers",
    "deleted:user:a@example.com?uid=1",
    "user:\u001b[2J@example.com",
    "serviceAccount:${lake.constructor}",
    "user:${team.length}@example.com",
    "principal://",
    "user:" + "a".repeat(200_000) + "@example.com",
    "${lake.labels}",
    "user:\ud800@example.com",
  ],
  members: [
    "[]",
    "user:a@example.com",
    "{a: 1}",
    "[[user:a@example.com]]",
    "[user:a@example.com, USER:A@example.com, user:A@EXAMPLE.COM]",
    '["${lake.labels.__proto__}"]',
    "[allUsers, allAuthenticatedUsers]",
    "[null, 1, true]",
    "[user:a@example.com, *nope]",
    '"${team}"',
  ],
  condition: [
    "{}",
    "{title: t}",
    "{title: t, expression: 1}",
    '{title: "", expression: ""}',
    "[]",
    "null",
    "{title: t, expression: true, description: {}}",
  ],
  bindings: [
    "[]",
    "{}",
    "[null]",
    "[{role: roles/x}]",
    "[{role: roles/x, members: [user:a@example.com]}, {role: roles/x, members: [user:b@example.com]}]",
    '[{role: "${team}", members: ["user:${team}@example.com"]}]',
    "[{role: roles/x, members: [bob, user:a@example.com]}]",
    `[{role: roles/x, members: [user:a@example.com], condition: {title: t, ` +
      `expression: ${JSON.stringify("request.time <")}}}]`,
    '"${rpPolicy.bindings}"',
    "[{role: roles/owner, members: [allUsers]}]",
    '[{role: roles/x, members: ["${lake.labels}"]}]',
  ],
  auditConfigs: [
    "[]",
    "{}",
    "[null, 1]",
    "[{service: allServices}]",
    "[{service: allServices, auditLogConfigs: [{logType: NOPE}]}]",
    "[{service: allServices, auditLogConfigs: [{logType: DATA_READ, exemptedMembers: [bob]}]}]",
    '"${rpPolicy.auditConfigs}"',
    '[{service: "${team}", auditLogConfigs: [{logType: DATA_WRITE, exemptedMembers: ["user:${team}@example.com"]}]}]',
    "[{service: allServices, auditLogConfigs: [{logType: ADMIN_READ}, {logType: ADMIN_READ}]}]",
  ],
};
/** Properties whose values are raw YAML (the others are written as quoted strings). */
const RAW_PROPS = new Set(["members", "condition", "bindings", "auditConfigs"]);

/** Condition expressions Google refuses, and a few it accepts. */
const EXPRESSIONS = [
  "'hello'",
  "request.time + 1",
  'resource.nme.startsWith("x")',
  'origin.ip == "10.0.0.1"',
  'resource.name.contains("prod")',
  'request.time.getHours("Europe/Berln") >= 9',
  'request.time < timestamp("2027-13-01")',
  'destination.port == "22"',
  'request.auth.access_levels.exists(l, l == "x")',
  "request.time <",
  "true",
  "1 == 1",
  '"${team}" == "sre"',
  "${lake.labels.owner}",
  "((((((((((((((((((((true))))))))))))))))))))",
  "!".repeat(5000) + "true",
  'resource.name.startsWith("projects/_/buckets/x") && ' +
    'api.getAttribute("iam.googleapis.com/modifiedGrantsByRole", ' +
    '[]).hasOnly(["roles/x"])',
  'request.time < timestamp("2001-01-01T00:00:00Z")',
  "\u0000",
  "a".repeat(20_000),
  // Known only at plan time: the resolved expression is checked then.
  'resource.name == "${team}"',
  "${team} == 1",
  'request.time < timestamp("${team}")',
  '"${lake.labels.owner}"',
];

/** References that are broken, reach into inherited members, or index absurdly. */
const REFS = [
  "${",
  "}${",
  "${}",
  "${nope}",
  "${a.b[99999999999999999999]}",
  '${lake.labels["__proto__"]}',
  "${toString}",
  "${lake.constructor}",
  "${lake.labels.constructor}",
  "${team.length}",
  "${__proto__.x}",
  "${viewers.members[-1]}",
  "${viewers.members[1e9]}",
  "${invoker.id.x}",
  "$${team}",
  "${lake.backendMetastores.constructor.name}",
  "${team}${team}${team}",
];

/** One IAM resource; every value is raw YAML (flow style, one line). */
interface Res {
  key: string;
  type: string;
  props: [string, string][];
  options: [string, string][];
}

export interface StackSpec {
  name: string;
  variables: [string, string][];
  resources: Res[];
  outputs: [string, string][];
  lint: [string, string][];
  /** Raw top-level lines appended at the end. */
  tail: string[];
}

const q = (s: string) => JSON.stringify(s);
const yKey = (k: string) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) ? k : q(k));

const binding = (
  key: string,
  name: string,
  role: string,
  members: string,
  extra: [string, string][] = [],
  options: [string, string][] = [],
): Res => ({ key, type: BINDING, props: [["name", name], ["role", role], ["members", members], ...extra], options });
const member = (key: string, name: string, role: string, m: string, options: [string, string][] = []): Res => ({
  key,
  type: MEMBER,
  props: [
    ["name", name],
    ["role", role],
    ["member", m],
  ],
  options,
});

const LAKE_INVOKE =
  `{fn::invoke: {function: ${q(GET_FEDERATION)}, arguments: ` + `{federationId: lake, location: us-central1}}}`;

const T = {
  rpPolicy: "cloudnative:backup/v1:RestorePlanIamPolicy",
  rpMember: "cloudnative:backup/v1:RestorePlanIamMember",
  epPolicy: "cloudnative:aiplatform/v1beta1:EndpointIamPolicy",
  epBinding: "cloudnative:aiplatform/v1beta1:EndpointIamBinding",
};
const res = (key: string, type: string, props: [string, string][], options: [string, string][] = []): Res => ({
  key,
  type,
  props,
  options,
});
/** The condition of the quick stack's admins binding (a resource added with it conflicts). */
const UNTIL_2099 = `{title: until-2099, expression: ${q('request.time < timestamp("2099-01-01T00:00:00Z")')}}`;
const AUDIT =
  "[{service: allServices, auditLogConfigs: [{logType: DATA_READ, exemptedMembers: " +
  "[user:auditor@example.com]}, {logType: ADMIN_READ}]}]";
const invoke = (fn: string, args: string) =>
  `{fn::invoke: {function: ${q(fn)}, arguments: {${args}, location: us-central1}}}`;

/** The IAM family of issue 16: both whole-policy types, the new member and binding types, both functions. */
function familyStack(): StackSpec {
  return {
    name: "family",
    variables: [
      ["team", "sre"],
      ["lake", LAKE_INVOKE],
      ["rpPolicy", invoke("cloudnative:backup/v1:getRestorePlanIamPolicy", "restorePlanId: weekly")],
      [
        "epPolicy",
        invoke("cloudnative:aiplatform/v1beta1:getEndpointIamPolicy", "endpointId: churn, project: my-project"),
      ],
    ],
    resources: [
      res(
        "nightlyPolicy",
        T.rpPolicy,
        [
          ["name", "nightly"],
          [
            "bindings",
            `[{role: roles/gkebackup.viewer, members: ["group:\${team}@example.com", ` +
              `user:alice@example.com]}, {role: roles/gkebackup.admin, members: [user:oncall@example.com], ` +
              `condition: ${UNTIL_2099}}]`,
          ],
          ["auditConfigs", AUDIT],
        ],
        [["ignoreChanges", "[auditConfigs]"]],
      ),
      res("weeklyMember", T.rpMember, [
        ["name", "us-central1/weekly"],
        ["role", q("${epPolicy.bindings[0].role}")],
        ["member", "user:bob@example.com"],
      ]),
      res(
        "churnBinding",
        T.epBinding,
        [
          ["name", "churn"],
          ["role", "roles/aiplatform.user"],
          ["members", '["serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com"]'],
        ],
        [["dependsOn", "[nightlyPolicy]"]],
      ),
      res("scorerPolicy", T.epPolicy, [
        ["name", "projects/my-project/locations/us-central1/endpoints/scorer"],
        ["bindings", "[{role: roles/aiplatform.user, members: [user:scorer@example.com]}]"],
      ]),
    ],
    outputs: [
      ["weeklyEtag", q("${rpPolicy.etag}")],
      ["churnRoles", q("${epPolicy.bindings}")],
      ["policyId", q("${nightlyPolicy.id}")],
    ],
    lint: [],
    tail: [],
  };
}

/** The starting stacks: every one loads and plans without an error against fuzzWorld(). */
export function baseStacks(): StackSpec[] {
  const quick: StackSpec = {
    name: "fuzz",
    variables: [
      ["team", "sre"],
      ["lake", LAKE_INVOKE],
    ],
    resources: [
      binding("viewers", "nightly", "roles/gkebackup.viewer", '["group:${team}@example.com", user:alice@example.com]'),
      binding(
        "admins",
        "weekly",
        "roles/gkebackup.admin",
        "[user:oncall@example.com]",
        [["condition", `{title: until-2099, expression: ${q('request.time < timestamp("2099-01-01T00:00:00Z")')}}`]],
        [
          ["protect", "true"],
          ["ignoreChanges", "[members]"],
        ],
      ),
      member(
        "invoker",
        "churn",
        "roles/aiplatform.user",
        q("serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com"),
        [["dependsOn", "[viewers]"]],
      ),
      member("scorer", "scorer", "roles/aiplatform.user", q("user:${team}@example.com")),
    ],
    outputs: [
      ["lakeEndpoint", q("${lake.endpointUri}")],
      ["invokerId", q("${invoker.id}")],
      ["literal", q("cost: $$5")],
    ],
    lint: [["basic-role", "true"]],
    tail: [],
  };
  const generated: StackSpec = {
    name: "gen",
    variables: [],
    resources: Array.from({ length: 12 }, (_, i) =>
      i % 2
        ? member(
            `m${i}`,
            i % 4 === 1 ? "churn" : "scorer",
            `roles/fuzz.invoker${i % 3}`,
            `serviceAccount:sa${i}@my-project.iam.gserviceaccount.com`,
          )
        : binding(
            `b${i}`,
            i % 4 === 0 ? "nightly" : "weekly",
            `roles/fuzz.role${i}`,
            `[user:u${i}@example.com, group:g${i}@example.com]`,
          ),
    ),
    outputs: [["first", q("${b0.members[0]}")]],
    lint: [],
    tail: [],
  };
  return [quick, generated, familyStack()];
}

/** The cloud the stacks plan against: the objects they name, with foreign grants, and the lake. */
export function fuzzWorld(crowded = 0): FakeWorld {
  const foreign = (i: number): Policy => ({
    version: 1,
    bindings: [
      {
        role: "roles/foreign.owner",
        members: Array.from({ length: i === 1 && crowded ? crowded : 1 }, (_, j) => `user:owner-${i}-${j}@example.com`),
      },
    ],
    etag: `e${i}`,
  });
  return {
    policies: {
      [RP]: foreign(1),
      [rpName("weekly")]: foreign(2),
      [EP]: foreign(3),
      [epName("scorer")]: foreign(4),
      [rpName("monthly")]: foreign(5),
    },
    federations: { [FED]: structuredClone(LAKE) },
  };
}

/** The stack as YAML text. */
export function renderStack(s: StackSpec): string {
  const out = [
    `name: ${s.name}`,
    "description: the hostile-input fuzzer's stack",
    "provider:",
    "  project: my-project",
    "  location: us-central1",
  ];
  if (s.variables.length) out.push("variables:", ...s.variables.map(([k, v]) => `  ${yKey(k)}: ${v}`));
  if (s.resources.length) out.push("resources:");
  for (const r of s.resources) {
    out.push(
      `  ${yKey(r.key)}:`,
      `    type: ${r.type}`,
      "    properties:",
      ...r.props.map(([k, v]) => `      ${yKey(k)}: ${v}`),
    );
    if (r.options.length) out.push("    options:", ...r.options.map(([k, v]) => `      ${yKey(k)}: ${v}`));
  }
  if (s.outputs.length) out.push("outputs:", ...s.outputs.map(([k, v]) => `  ${yKey(k)}: ${v}`));
  if (s.lint.length) out.push("lint:", ...s.lint.map(([k, v]) => `  ${yKey(k)}: ${v}`));
  return [...out, ...s.tail].join("\n") + "\n";
}

// --- mutations ---------------------------------------------------------------------------------

type Section = "variables" | "resources" | "outputs" | "lint";

export type StackMutation =
  | { kind: "stackName"; value: string }
  | { kind: "rename"; section: Section; index: number; to: string }
  | { kind: "addEntry"; section: Section; name: string; value: number }
  | { kind: "setProp"; res: number; prop: keyof typeof PROP_VALUES; value: number }
  | { kind: "condition"; res: number; expression: string }
  | { kind: "reference"; res: number; prop: number; ref: string }
  | { kind: "alias"; how: "undefined" | "loop" | "bomb" | "deepAlias"; levels: number }
  | { kind: "nest"; depth: number; flow: boolean }
  | { kind: "huge"; bytes: number; where: "description" | "variable" | "member" }
  | { kind: "crowd"; principals: number; bindings: number; interpolated: boolean; asPolicy: boolean }
  | { kind: "dependsOn"; res: number; names: string[] };

export type ByteMutation = { kind: "bytes"; at: number; bytes: number[] } | { kind: "truncate"; at: number };

const section = fc.constantFrom<Section>("variables", "resources", "outputs", "lint");
const hostileName = fc.oneof(fc.constantFrom(...INHERITED), fc.constantFrom(...NASTY_NAMES));

export const stackMutation: fc.Arbitrary<StackMutation> = fc.oneof(
  fc.record({
    kind: fc.constant("stackName" as const),
    value: fc.oneof(fc.constantFrom(...STACK_NAMES), fc.string({ maxLength: 12 })),
  }),
  {
    arbitrary: fc.record({ kind: fc.constant("rename" as const), section, index: fc.nat(), to: hostileName }),
    weight: 3,
  },
  {
    arbitrary: fc.record({ kind: fc.constant("addEntry" as const), section, name: hostileName, value: fc.nat() }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("setProp" as const),
      res: fc.nat(),
      prop: fc.constantFrom(...(Object.keys(PROP_VALUES) as (keyof typeof PROP_VALUES)[])),
      value: fc.nat(),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("condition" as const),
      res: fc.nat(),
      expression: fc.oneof(fc.constantFrom(...EXPRESSIONS), fc.string({ maxLength: 30 })),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("reference" as const),
      res: fc.nat(),
      prop: fc.nat(),
      ref: fc.constantFrom(...REFS),
    }),
    weight: 2,
  },
  fc.record({
    kind: fc.constant("alias" as const),
    how: fc.constantFrom("undefined" as const, "loop" as const, "bomb" as const, "deepAlias" as const),
    levels: fc.integer({ min: 2, max: 8 }),
  }),
  fc.record({
    kind: fc.constant("nest" as const),
    depth: fc.oneof(fc.integer({ min: 30, max: 80 }), fc.integer({ min: 80, max: 20_000 })),
    flow: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("huge" as const),
    bytes: fc.integer({ min: 10_000, max: 2_000_000 }),
    where: fc.constantFrom("description" as const, "variable" as const, "member" as const),
  }),
  fc.record({
    kind: fc.constant("crowd" as const),
    principals: fc.integer({ min: 1_400, max: 1_700 }),
    bindings: fc.integer({ min: 1, max: 3 }),
    interpolated: fc.boolean(),
    asPolicy: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("dependsOn" as const),
    res: fc.nat(),
    names: fc.array(hostileName, { minLength: 1, maxLength: 3 }),
  }),
);

export const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("bytes" as const),
      at: fc.nat(),
      bytes: fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 3 }),
    }),
    weight: 3,
  },
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
);

export const stackCase = fc.record({
  base: fc.nat({ max: 2 }),
  /** Foreign principals already on the nightly restore plan (the stack's grants may push it over 1,500). */
  crowdedWorld: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.integer({ min: 1_400, max: 1_550 })),
  muts: fc.array(stackMutation, { minLength: 1, maxLength: 3 }),
  /** One stack in five also gets bytes that are not UTF-8, or is cut short. */
  bytes: fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary: byteMutation, weight: 1 }),
});
export type StackCase = typeof stackCase extends fc.Arbitrary<infer T> ? T : never;

/** Entries of a section as [name, raw value] pairs (resources by key). */
function entries(s: StackSpec, sec: Section): { keys: string[]; rename: (i: number, to: string) => void } {
  const list = sec === "resources" ? s.resources : s[sec];
  return {
    keys: sec === "resources" ? s.resources.map((r) => r.key) : s[sec].map(([k]) => k),
    rename: (i, to) => {
      if (sec === "resources") s.resources[i]!.key = to;
      else (list as [string, string][])[i]![0] = to;
    },
  };
}

/** Every raw value of the stack rewritten by `f` (references follow a rename). */
function rewriteValues(s: StackSpec, f: (v: string) => string): void {
  for (const e of [...s.variables, ...s.outputs]) e[1] = f(e[1]);
  for (const r of s.resources) for (const e of [...r.props, ...r.options]) e[1] = f(e[1]);
}

const ENTRY_VALUES: Record<Section, string[]> = {
  variables: ["x", "{valueOf: tv}", LAKE_INVOKE, q("${team}"), "[1, 2]", "null", "{fn::invoke: null}"],
  outputs: [
    q("${constructor.member}"),
    q("${toString.valueOf}"),
    q("${__proto__}"),
    q("${viewers.members}"),
    "literal",
    q("${lake}"),
  ],
  lint: ["false", "true", "1", "null"],
  resources: [],
};

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length]!;
const deepFlow = (depth: number, leaf: string) => "[".repeat(depth) + leaf + "]".repeat(depth);

/** `m` applied to a copy of `s`. */
export function mutateStack(base: StackSpec, m: StackMutation): StackSpec {
  const s = structuredClone(base);
  const res = (i: number) => (s.resources.length ? s.resources[i % s.resources.length] : undefined);
  switch (m.kind) {
    case "stackName":
      s.name = q(m.value);
      break;
    case "rename":
      rename(s, m);
      break;
    case "addEntry":
      if (m.section === "resources") s.resources.push(addedResource(m.name, m.value));
      else s[m.section].push([m.name, pick(ENTRY_VALUES[m.section], m.value)]);
      break;
    case "setProp": {
      const r = res(m.res);
      if (!r) break;
      const value = pick(PROP_VALUES[m.prop]!, m.value);
      const raw = RAW_PROPS.has(m.prop) ? value : q(value);
      const at = r.props.findIndex(([k]) => k === m.prop);
      if (at >= 0) r.props[at]![1] = raw;
      else r.props.push([m.prop, raw]);
      break;
    }
    case "condition": {
      const r = res(m.res);
      if (!r) break;
      r.props = r.props.filter(([k]) => k !== "condition");
      r.props.push(["condition", `{title: fuzz, expression: ${q(m.expression)}}`]);
      break;
    }
    case "reference": {
      const r = res(m.res);
      if (!r || !r.props.length) break;
      const p = r.props[m.prop % r.props.length]!;
      const inner = p[1].startsWith('"') ? (JSON.parse(p[1]) as string) : p[1];
      p[1] = q(inner.slice(0, inner.length >> 1) + m.ref + inner.slice(inner.length >> 1));
      break;
    }
    case "alias":
      s.variables.push(...aliasEntries(m.how, m.levels));
      break;
    case "nest":
      if (m.flow) s.variables.push(["deep", deepFlow(m.depth, "x")]);
      else {
        // Block nesting costs its depth squared in indentation: 300 levels is already 90,000 spaces.
        const depth = Math.min(m.depth, 300);
        s.tail.push(
          "extra:",
          ...Array.from({ length: depth }, (_, i) => `${" ".repeat(2 + 2 * i)}k:`),
          `${" ".repeat(2 + 2 * depth)}k: end`,
        );
      }
      break;
    case "huge":
      addHuge(s, m);
      break;
    case "crowd":
      addCrowd(s, m);
      break;
    case "dependsOn": {
      const r = res(m.res);
      if (!r) break;
      r.options = r.options.filter(([k]) => k !== "dependsOn");
      r.options.push(["dependsOn", `[${m.names.map(q).join(", ")}]`]);
      break;
    }
  }
  return s;
}

/** A resource added under a hostile name: of any type, on an object the base stacks already manage. */
function addedResource(name: string, value: number): Res {
  const who = `user:${value % 7}@example.com`;
  switch (value % 5) {
    case 1:
      return res(name, T.rpPolicy, [
        ["name", "nightly"],
        ["bindings", `[{role: roles/fuzz.added, members: [${who}]}]`],
      ]);
    case 2:
      return res(name, T.epBinding, [
        ["name", "scorer"],
        ["role", "roles/aiplatform.user"],
        ["members", `[${who}]`],
      ]);
    case 3:
      return res(name, T.rpMember, [
        ["name", "weekly"],
        ["role", "roles/gkebackup.admin"],
        ["member", who],
        ["condition", UNTIL_2099],
      ]);
    case 4:
      return res(name, T.epPolicy, [
        ["name", "churn"],
        ["bindings", "[]"],
        ["auditConfigs", AUDIT],
      ]);
    default:
      return member(name, "churn", "roles/aiplatform.user", who);
  }
}

/** Renames an entry; the references to it follow (`${old…}`, `[old]` in dependsOn). */
function rename(s: StackSpec, m: Extract<StackMutation, { kind: "rename" }>): void {
  const e = entries(s, m.section);
  if (!e.keys.length) return;
  const from = pick(e.keys, m.index);
  e.rename(m.index % e.keys.length, m.to);
  const esc = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  rewriteValues(s, (v) =>
    v
      .replace(new RegExp(`\\$\\{${esc}(?=[.}[])`, "g"), `\${${m.to}`)
      .replace(new RegExp(`\\[${esc}\\]`, "g"), `[${q(m.to)}]`),
  );
}

function addHuge(s: StackSpec, m: Extract<StackMutation, { kind: "huge" }>): void {
  const big = q("h".repeat(m.bytes));
  if (m.where === "variable") s.variables.push(["huge", big]);
  else if (m.where === "description") s.tail.push(`x-huge: ${big}`);
  else if (s.resources.length) {
    const r = s.resources[0]!;
    const huge = q(`user:${"h".repeat(m.bytes)}@example.com`);
    const at = r.props.findIndex(([k]) => k === "member" || k === "members");
    r.props[at >= 0 ? at : r.props.length] =
      r.props[at]?.[0] === "members" ? ["members", `[${huge}]`] : ["member", huge];
  }
}

/** Bindings on one restore plan with `principals` members in all: binding resources on the
 *  nightly plan, or the bindings of one policy resource on the monthly plan. */
function addCrowd(s: StackSpec, m: Extract<StackMutation, { kind: "crowd" }>): void {
  const n = Math.ceil(m.principals / m.bindings);
  // Interpolated members are counted only when the plan resolves them.
  const one = (b: number, i: number) =>
    m.interpolated ? q(`user:c${b}-${i}-\${team}@example.com`) : `user:c${b}-${i}@example.com`;
  const members = (b: number) => `[${Array.from({ length: n }, (_, i) => one(b, i)).join(", ")}]`;
  const roles = Array.from({ length: m.bindings }, (_, b) => b);
  if (m.asPolicy)
    s.resources.push(
      res("crowdPolicy", T.rpPolicy, [
        ["name", "monthly"],
        ["bindings", `[${roles.map((b) => `{role: roles/fuzz.crowd${b}, members: ${members(b)}}`).join(", ")}]`],
      ]),
    );
  else for (const b of roles) s.resources.push(binding(`crowd${b}`, "nightly", `roles/fuzz.crowd${b}`, members(b)));
}

function aliasEntries(how: "undefined" | "loop" | "bomb" | "deepAlias", levels: number): [string, string][] {
  switch (how) {
    case "undefined":
      return [["dangling", "[x, *nope]"]];
    case "loop":
      return [["looped", "&loop [x, *loop]"]];
    case "bomb": {
      // Each anchor repeats the previous one ten times: 10^levels copies of "x".
      const out: [string, string][] = [["a0", "&a0 [x, x, x, x, x, x, x, x, x, x]"]];
      for (let i = 1; i < levels; i++)
        out.push([
          `a${i}`,
          `&a${i} [${Array(10)
            .fill(`*a${i - 1}`)
            .join(", ")}]`,
        ]);
      return out;
    }
    case "deepAlias":
      return [
        ["d0", `&d0 ${deepFlow(10 * levels, "x")}`],
        ["d1", deepFlow(10 * levels, "*d0")],
      ];
  }
}

/** The stack file's bytes after a byte-level mutation (bytes that are not UTF-8, truncation). */
export function mutateBytes(text: string, m: ByteMutation | null): Uint8Array {
  const bytes = Buffer.from(text, "utf8");
  if (!m) return bytes;
  const at = m.at % (bytes.length + 1);
  if (m.kind === "truncate") return bytes.subarray(0, at);
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
}

/** The bytes of a case's stack file. */
export function renderCase(c: StackCase): Uint8Array {
  const spec = c.muts.reduce(mutateStack, baseStacks()[c.base]!);
  return mutateBytes(renderStack(spec), c.bytes);
}
