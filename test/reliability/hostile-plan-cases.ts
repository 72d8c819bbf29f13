// Hostile saved plans for the bad-input fuzzer (issue 12): plans made by the real planner over an
// in-memory cloud and sealed as `plan --out` seals them, then edited as someone between review and
// apply might (grants, actions, access changes, imports, prototype keys, huge numbers, wrong
// types, deleted and added fields), resealed or not (a recomputed digest, the right key, a wrong
// key, no seal) and damaged byte by byte. The oracle, `grantsOf`, is written here from the SPEC's
// definition of a grant (member case, member order and duplicates do not matter), not from
// src/plan/plan-differences.ts.
import fc from "fast-check";
import type { Plan, State } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { sealPlan } from "../../src/plan/saved-plan.js";
import {
  BINDING,
  EP,
  MEMBER,
  RP,
  bindingState,
  epName,
  fakeCloud,
  makeState,
  memberState,
  planOptions,
  rpName,
  stackOf,
  type FakeWorld,
} from "../fixtures/builders.js";
import type { StackModel } from "../../src/config/model.js";
import { fuzzWorld } from "./hostile-stack-cases.js";

export const PLAN_KEY = "fuzz-plan-key-0123456789";

export interface PlanScenario {
  what: string;
  stack: StackModel;
  prior: State | undefined;
  /** The plan as made (unsealed). */
  plan: Plan;
  /** A fresh plan of the same stack, state and options against the same cloud. */
  fresh: Plan;
}

const STACK =
  `name: fuzz
provider:
  project: my-project
  location: us-central1
variables:
  lake:
    fn::invoke:
     ` +
  ` function: cloudnative:metastore/v1alpha:getFederation
      arguments: { federationId: lake, location: ` +
  `us-central1 }
resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: ` +
  `roles/gkebackup.viewer, members: [user:alice@example.com, group:sre@example.com] }
  admins:
    type: ` +
  `${BINDING}
    properties:
      name: weekly
      role: roles/gkebackup.admin
      members: ` +
  `[user:oncall@example.com]
      condition: { title: until-2099, description: on call, expression: ` +
  `'request.time < timestamp("2099-01-01T00:00:00Z")' }
  invoker:
    type: ${MEMBER}
    properties: { name: ` +
  `churn, role: roles/aiplatform.user, member: ` +
  `"serviceAccount:\${lake.labels.owner}@my-project.iam.gserviceaccount.com" }
  adopted:
    type: ${MEMBER}
 ` +
  `   properties: { name: scorer, role: roles/aiplatform.user, member: user:held@example.com }
    options: { ` +
  `import: "${epName("scorer")} roles/aiplatform.user user:held@example.com" }
outputs:
  who: ` +
  `\${invoker.member}
`;

/** A prior state: viewers with other members (update), a member the stack dropped (delete), invoker unchanged. */
function priorState(): State {
  return makeState("fuzz", [
    bindingState(
      "viewers",
      { name: RP, role: "roles/gkebackup.viewer", members: ["user:alice@example.com", "user:bob@example.com"] },
      "e1",
    ),
    memberState(
      "invoker",
      { name: EP, role: "roles/aiplatform.user", member: "serviceAccount:data-eng@my-project.iam.gserviceaccount.com" },
      "e3",
    ),
    memberState("dropped", { name: EP, role: "roles/fuzz.old", member: "user:gone@example.com" }, "e3"),
  ]);
}

function worldFor(prior: State | undefined): FakeWorld {
  const w = fuzzWorld();
  const add = (name: string, role: string, members: string[]) => w.policies![name]!.bindings!.push({ role, members });
  add(epName("scorer"), "roles/aiplatform.user", ["user:held@example.com"]);
  if (prior) {
    add(RP, "roles/gkebackup.viewer", ["user:alice@example.com", "user:bob@example.com"]);
    add(EP, "roles/aiplatform.user", ["serviceAccount:data-eng@my-project.iam.gserviceaccount.com"]);
    add(EP, "roles/fuzz.old", ["user:gone@example.com"]);
  }
  return w;
}

/** Three plans: creating everything, updating from a prior state (update, delete, no-op, import), destroying it. */
export async function planScenarios(): Promise<PlanScenario[]> {
  const stack = stackOf(STACK, "/virtual/fuzz/stack.yaml");
  const prior = priorState();
  const out: PlanScenario[] = [];
  for (const [what, p, destroy] of [
    ["create", undefined, false],
    ["update", prior, false],
    ["destroy", prior, true],
  ] as const) {
    const make = async () => (await plan(stack, p, fakeCloud(worldFor(p)).port, planOptions({ destroy }))).plan;
    const made = await make();
    if (made.errored) throw new Error(`scenario ${what} does not plan: ${JSON.stringify(made.diagnostics)}`);
    out.push({ what, stack, prior: p, plan: made, fresh: await make() });
  }
  return out;
}

// --- the oracle ---------------------------------------------------------------------------------

/** JSON with sorted keys (the test's own canonical form). */
export function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : canon(x))).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/**
 * SPEC section 1: the identifier after the type prefix compares case-insensitively, except for the public and principal
 * forms.
 */
function norm(m: unknown): unknown {
  if (
    typeof m !== "string" ||
    m === "allUsers" ||
    m === "allAuthenticatedUsers" ||
    m.startsWith("principal://") ||
    m.startsWith("principalSet://")
  )
    return m;
  const i = m.indexOf(":");
  return i < 0 ? m : m.slice(0, i + 1) + m.slice(i + 1).toLowerCase();
}

const cond = (c: unknown) =>
  c && typeof c === "object"
    ? [
        (c as Record<string, unknown>).title,
        (c as Record<string, unknown>).description ?? "",
        (c as Record<string, unknown>).expression,
      ]
    : null;

/** The grant a resource change's before/after holds: name, role, condition and its members (as a set) or its member. */
function grant(type: unknown, v: unknown): unknown {
  if (v === null || typeof v !== "object") return v ?? null;
  const o = v as Record<string, unknown>;
  const members =
    Array.isArray(o.members) && o.members.every((m) => typeof m === "string")
      ? [...new Set(o.members.map(norm))].sort()
      : o.members;
  const fields: Record<string, unknown> = { name: o.name, role: o.role, condition: cond(o.condition) };
  if (type !== MEMBER) fields.members = members;
  if (type !== BINDING) fields.member = norm(o.member);
  return fields;
}

/**
 * What a plan grants and revokes: its resource changes (mode, address, type, actions, import ID,
 * deferred configuration, the grants before and after, and whether they were granted outside
 * converge: an adopted grant is left in place by a delete) and its access changes.
 */
export function grantsOf(p: Plan): string {
  const adoption = (c: Plan["resource_changes"][number]) => [c.before_adopted === true, c.after_adopted === true];
  const changes = (p.resource_changes ?? []).map((c) =>
    canon([
      c.mode,
      c.address,
      c.type,
      c.change.action,
      c.change.importing?.id ?? null,
      c.config ?? null,
      ...(c.mode === "managed" ? [grant(c.type, c.change.before), grant(c.type, c.change.after), adoption(c)] : []),
    ]),
  );
  const access = new Set(
    (p.access_changes?.changes ?? []).map((a) =>
      canon([a.object, a.kind, norm(a.principal), a.role, cond(a.condition), a.action]),
    ),
  );
  return canon({
    changes: changes.sort(),
    access: [...access].sort(),
    incomplete: [...new Set(p.access_changes?.incomplete ?? [])].sort(),
  });
}

// --- edits ---------------------------------------------------------------------------------------

const GRANT_EDITS = [
  "addMember",
  "removeMember",
  "swapMember",
  "role",
  "name",
  "condition",
  "conditionTitle",
  "dropCondition",
  "member",
  "memberCase",
  "reorder",
  "dupCase",
  "nullify",
] as const;
const ACTIONS = ["create", "update", "delete", "no-op", "read", "replace", ["create", "delete"], [], "", "bogus", null];
const ACCESS_EDITS = [
  "principal",
  "principalCase",
  "action",
  "drop",
  "add",
  "role",
  "object",
  "incomplete",
  "removeAll",
  "addresses",
] as const;
/** Raw JSON spliced into the text in place of a marker string: numbers JSON.stringify cannot write. */
const RAW = ["1e999", "-1e999", "9007199254740993", "1e-400", "-0", "123456789012345678901234567890", "0.1e1"];
const WRONG = [
  null,
  "",
  "x",
  0,
  -1,
  1.5,
  true,
  [],
  {},
  [[]],
  JSON.parse('{"__proto__": {"polluted": true}}') as unknown,
  "\u0000",
  "\u001b[2J",
  "x".repeat(100_000),
];
const KEYS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype", "x"];

export type PlanEdit =
  | { kind: "grant"; change: number; when: "before" | "after"; edit: (typeof GRANT_EDITS)[number] }
  | { kind: "actions"; change: number; to: number }
  | { kind: "dropChange" | "dupChange" | "mode" | "importId" | "config" | "adopted"; change: number }
  | { kind: "addChange" }
  | { kind: "access"; index: number; edit: (typeof ACCESS_EDITS)[number] }
  | { kind: "set"; path: number; value: number; raw: boolean }
  | { kind: "delete"; path: number }
  | { kind: "addKey"; path: number; key: string; value: number }
  | { kind: "benign"; field: "timestamp" | "etag" | "diagnostics" | "target" | "drift" };

export const planEdit: fc.Arbitrary<PlanEdit> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("grant" as const),
      change: fc.nat(),
      when: fc.constantFrom("before" as const, "after" as const),
      edit: fc.constantFrom(...GRANT_EDITS),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant("actions" as const), change: fc.nat(), to: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom(
        "dropChange" as const,
        "dupChange" as const,
        "mode" as const,
        "importId" as const,
        "config" as const,
        "adopted" as const,
      ),
      change: fc.nat(),
    }),
    weight: 3,
  },
  fc.record({ kind: fc.constant("addChange" as const) }),
  {
    arbitrary: fc.record({
      kind: fc.constant("access" as const),
      index: fc.nat(),
      edit: fc.constantFrom(...ACCESS_EDITS),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({ kind: fc.constant("set" as const), path: fc.nat(), value: fc.nat(), raw: fc.boolean() }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant("delete" as const), path: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant("addKey" as const),
      path: fc.nat(),
      key: fc.constantFrom(...KEYS),
      value: fc.nat(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("benign" as const),
      field: fc.constantFrom(
        "timestamp" as const,
        "etag" as const,
        "diagnostics" as const,
        "target" as const,
        "drift" as const,
      ),
    }),
    weight: 2,
  },
);

/**
 * How the edited plan is sealed again: not (the old seal), a recomputed digest, the right key, another key, or no seal
 * at all.
 */
export type Reseal = "keep" | "digest" | "rightKey" | "wrongKey" | "strip";
export type PlanBytes =
  | { kind: "flip"; at: number; bit: number }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "bom" };

export const planCase = fc.record({
  scenario: fc.nat({ max: 2 }),
  /** The plan was saved with CONVERGE_PLAN_KEY set (signed). */
  signed: fc.boolean(),
  /** CONVERGE_PLAN_KEY is set when it is applied. */
  keyAtApply: fc.boolean(),
  edits: fc.array(planEdit, { minLength: 0, maxLength: 3 }),
  reseal: fc.constantFrom<Reseal>("keep", "digest", "digest", "rightKey", "wrongKey", "strip"),
  /** One file in five is also damaged byte by byte. */
  bytes: fc.oneof(
    { arbitrary: fc.constant(null), weight: 4 },
    fc.oneof(
      fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
      fc.record({
        kind: fc.constant("insert" as const),
        at: fc.nat(),
        text: fc.constantFrom(",", "}", '"', "\u0000", '"__proto__":{},', "\ufffd", "\\u0000", " "),
      }),
      fc.record({ kind: fc.constant("bom" as const) }),
    ),
  ),
});
export type PlanCase = typeof planCase extends fc.Arbitrary<infer T> ? T : never;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object";
const define = (o: Obj, k: string, v: unknown) =>
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

/** Every object and array of a document with the key that leads to it, for random edits. */
function containers(v: unknown, out: { parent: Obj | unknown[]; key: string | number }[] = []): typeof out {
  const entries: [string | number, unknown][] = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : isObj(v)
      ? Object.entries(v)
      : [];
  for (const [key, x] of entries) {
    out.push({ parent: v as Obj | unknown[], key });
    containers(x, out);
  }
  return out;
}

const marker = (raw: string) => `\u0000RAW:${raw}`;

/** The edit applied in place to `doc` (a parsed plan). */
export function editPlan(doc: Obj, e: PlanEdit): void {
  const changes = Array.isArray(doc.resource_changes) ? (doc.resource_changes as Obj[]) : [];
  // Earlier edits may have put anything anywhere: only objects are edited further.
  const objOrNone = (v: unknown) => (isObj(v) && !Array.isArray(v) ? v : undefined);
  const change = (i: number) => (changes.length ? objOrNone(changes[i % changes.length]) : undefined);
  const inner = (i: number) => objOrNone(change(i)?.change);
  switch (e.kind) {
    case "grant": {
      const v = objOrNone(inner(e.change)?.[e.when]);
      if (v) editGrant(v, e.edit);
      break;
    }
    case "actions": {
      const c = inner(e.change);
      if (c) c.action = structuredClone(ACTIONS[e.to % ACTIONS.length]);
      break;
    }
    case "dropChange":
      if (changes.length) changes.splice(e.change % changes.length, 1);
      break;
    case "dupChange":
      if (changes.length) changes.push(structuredClone(changes[e.change % changes.length]!));
      break;
    case "mode": {
      const c = change(e.change);
      if (c) c.mode = c.mode === "managed" ? "data" : "managed";
      break;
    }
    case "importId": {
      const c = inner(e.change);
      if (c) c.importing = { id: `${rpName("nightly")} roles/owner user:mallory@example.com` };
      break;
    }
    case "config": {
      const c = change(e.change);
      if (c) c.config = { name: "nightly", role: "roles/owner", members: ["user:mallory@example.com"] };
      break;
    }
    case "adopted": {
      const c = change(e.change);
      if (c) c.before_adopted = !c.before_adopted;
      break;
    }
    case "addChange":
      changes.push({
        address: "mallory",
        mode: "managed",
        type: BINDING,
        name: "mallory",
        policy: RP,
        change: {
          action: "create",
          before: null,
          after: { name: RP, role: "roles/owner", members: ["user:mallory@example.com"] },
        },
      });
      break;
    case "access":
      editAccess(doc, e.index, e.edit);
      break;
    default:
      editAnywhere(doc, e);
  }
}

function editGrant(v: Obj, edit: (typeof GRANT_EDITS)[number]): void {
  const members = Array.isArray(v.members) ? (v.members as unknown[]) : undefined;
  switch (edit) {
    case "addMember":
      if (members) members.push("user:mallory@example.com");
      else v.member = "user:mallory@example.com";
      break;
    case "removeMember":
      members?.pop();
      break;
    case "swapMember":
      if (members?.length) members[0] = "user:mallory@example.com";
      break;
    case "role":
      v.role = "roles/owner";
      break;
    case "name":
      v.name = rpName("other");
      break;
    case "condition":
      if (isObj(v.condition)) v.condition.expression = "true";
      else v.condition = { title: "sneaky", expression: "true" };
      break;
    case "conditionTitle":
      if (isObj(v.condition)) v.condition.title = "renamed";
      break;
    case "dropCondition":
      delete v.condition;
      break;
    case "member":
      if (typeof v.member === "string") v.member = "user:mallory@example.com";
      break;
    // The next three do not change the grant: member case, order and duplicates do not count.
    case "memberCase":
      if (members)
        v.members = members.map((m) =>
          typeof m === "string" && /^(user|group|serviceAccount):/.test(m)
            ? m.replace(/:(.*)/, (_, r: string) => `:${r.toUpperCase()}`)
            : m,
        );
      else if (typeof v.member === "string" && /^(user|group|serviceAccount):/.test(v.member))
        v.member = v.member.replace(/:(.*)/, (_, r: string) => `:${r.toUpperCase()}`);
      break;
    case "reorder":
      members?.reverse();
      break;
    case "dupCase":
      if (members?.length && typeof members[0] === "string" && /^(user|group):/.test(members[0]))
        members.push((members[0] as string).toUpperCase().replace(/^(USER|GROUP)/, (p) => p.toLowerCase()));
      break;
    case "nullify":
      v.members = null;
      break;
  }
}

function editAccess(doc: Obj, index: number, edit: (typeof ACCESS_EDITS)[number]): void {
  const delta = isObj(doc.access_changes) ? doc.access_changes : undefined;
  if (!delta) return;
  if (edit === "removeAll") return void delete doc.access_changes;
  if (edit === "incomplete")
    return void (delta.incomplete = [...(Array.isArray(delta.incomplete) ? delta.incomplete : []), RP]);
  const list = Array.isArray(delta.changes) ? (delta.changes as Obj[]) : [];
  if (edit === "add")
    return void list.push({
      object: RP,
      kind: "restorePlan",
      principal: "user:mallory@example.com",
      role: "roles/owner",
      action: "grant",
      addresses: [],
    });
  if (!list.length) return;
  const a = list[index % list.length];
  if (!isObj(a) || Array.isArray(a)) return;
  if (edit === "drop") list.splice(index % list.length, 1);
  else if (edit === "principal") a.principal = "user:mallory@example.com";
  else if (
    edit === "principalCase" &&
    typeof a.principal === "string" &&
    /^(user|group|serviceAccount):/.test(a.principal)
  )
    a.principal = a.principal
      .toUpperCase()
      .replace(/^[A-Z]+(?=:)/, (p) => (p === "SERVICEACCOUNT" ? "serviceAccount" : p.toLowerCase()));
  else if (edit === "action") a.action = a.action === "grant" ? "revoke" : "grant";
  else if (edit === "role") a.role = "roles/owner";
  else if (edit === "object") a.object = epName("other");
  else if (edit === "addresses") a.addresses = ["someone-else"];
}

function editAnywhere(doc: Obj, e: Extract<PlanEdit, { kind: "set" | "delete" | "addKey" | "benign" }>): void {
  if (e.kind === "benign") {
    if (e.field === "timestamp") doc.timestamp = "2030-01-01T00:00:00.000Z";
    else if (e.field === "etag" && Array.isArray(doc.policies))
      for (const p of doc.policies as Obj[]) p.etag = "forged";
    else if (e.field === "diagnostics") doc.diagnostics = [];
    else if (e.field === "target") doc.target = "somewhere else";
    else if (e.field === "drift") doc.resource_drift = [];
    return;
  }
  const all = containers(doc);
  if (!all.length) return;
  const { parent, key } = all[e.path % all.length]!;
  if (e.kind === "delete") {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key as string];
  } else if (e.kind === "set") {
    const value = e.raw ? marker(RAW[e.value % RAW.length]!) : structuredClone(WRONG[e.value % WRONG.length]);
    if (Array.isArray(parent)) parent[key as number] = value;
    else define(parent, key as string, value);
  } else {
    const target = (parent as Obj)[key as never] as unknown;
    if (isObj(target) && !Array.isArray(target)) define(target, e.key, structuredClone(WRONG[e.value % WRONG.length]));
  }
}

/** The document as the file's JSON text, with raw numbers spliced in where markers are. */
export function planText(doc: unknown): string {
  return JSON.stringify(doc, null, 2).replace(/"\\u0000RAW:([^"]*)"/g, "$1") + "\n";
}

/** The file's text after a byte-level accident. */
export function damage(text: string, b: PlanBytes | null): Buffer {
  const bytes = Buffer.from(text, "utf8");
  if (!b) return bytes;
  if (b.kind === "bom") return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  const at = b.at % Math.max(1, bytes.length);
  if (b.kind === "truncate") return bytes.subarray(0, at);
  if (b.kind === "insert")
    return Buffer.concat([bytes.subarray(0, at), Buffer.from(b.text, "utf8"), bytes.subarray(at)]);
  const out = Buffer.from(bytes);
  out[at] = out[at]! ^ (1 << b.bit);
  return out;
}

/** The saved file of a case: the scenario's plan sealed as saved, edited, resealed as the case says, damaged. */
export function savedPlanFile(s: PlanScenario, c: PlanCase): { bytes: Buffer; edited: Obj } {
  const doc = JSON.parse(JSON.stringify(sealPlan(s.plan, c.signed ? PLAN_KEY : undefined))) as Obj;
  for (const e of c.edits) editPlan(doc, e);
  if (c.reseal !== "keep") {
    delete doc.digest;
    delete doc.signature;
    if (c.reseal !== "strip") {
      // Sealed over what converge will parse (raw numbers included), as an editor with the code would.
      const parsed = JSON.parse(planText(doc)) as Plan;
      const sealed = sealPlan(
        parsed,
        c.reseal === "rightKey" ? PLAN_KEY : c.reseal === "wrongKey" ? "another-key" : undefined,
      );
      doc.digest = sealed.digest;
      if (sealed.signature) doc.signature = sealed.signature;
    }
  }
  return { bytes: damage(planText(doc), c.bytes), edited: doc };
}
