// The conflict table of issue 16: every pair of IAM types on the same object kind, with
// overlapping scope, is a load error naming both resources (at the second, saying where the first
// is declared); non-overlapping pairs are accepted. Literal values are judged at load
// (loadStackFile, no network); `${…}` values once resolved, at plan time, before any write.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadStackFile } from "../../src/config/load.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { Federation, Policy } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { FED, LAKE, LOCATION, PROJECT, STACK_HEAD, planOptions, stackOf } from "../fixtures/builders.js";

type Ownership = "policy" | "binding" | "member";
type Kind = "restorePlan" | "endpoint";

const TOKENS: Record<Kind, Record<Ownership, string>> = {
  restorePlan: {
    policy: "cloudnative:backup/v1:RestorePlanIamPolicy",
    binding: "cloudnative:backup/v1:RestorePlanIamBinding",
    member: "cloudnative:backup/v1:RestorePlanIamMember",
  },
  endpoint: {
    policy: "cloudnative:aiplatform/v1beta1:EndpointIamPolicy",
    binding: "cloudnative:aiplatform/v1beta1:EndpointIamBinding",
    member: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
  },
};
const COLLECTION: Record<Kind, string> = { restorePlan: "restorePlans", endpoint: "endpoints" };

interface Condition {
  title: string;
  description?: string;
  expression: string;
}

/** What one resource targets: object (as written), role, condition, member. */
interface Target {
  object: string;
  role: string;
  condition?: Condition;
  member: string;
}

const COND: Condition = {
  title: "until 2030",
  description: "temporary",
  expression: "request.time < timestamp('2030-01-01T00:00:00Z')",
};
const BASE: Target = { object: "nightly", role: "roles/x.viewer", member: "user:a@example.com" };

function properties(kind: Kind, own: Ownership, t: Target): Record<string, unknown> {
  const cond = t.condition ? { condition: t.condition } : {};
  if (own === "policy") return { name: t.object, bindings: [{ role: t.role, members: [t.member], ...cond }] };
  if (own === "binding") return { name: t.object, role: t.role, members: [t.member], ...cond };
  return { name: t.object, role: t.role, member: t.member, ...cond };
}

/** A stack of two resources; `first` is declared at 6:3 and `second` at 9:3. */
function stackText(a: { kind: Kind; own: Ownership; t: Target }, b: { kind: Kind; own: Ownership; t: Target }): string {
  const res = (name: string, r: typeof a) =>
    `  ${name}:\n    type: ${TOKENS[r.kind][r.own]}\n    properties: ` +
    `${JSON.stringify(properties(r.kind, r.own, r.t))}\n`;
  return `${STACK_HEAD}resources:\n${res("first", a)}${res("second", b)}`;
}

const dir = mkdtempSync(join(tmpdir(), "conflict-table-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function load(text: string): { file: string; errors: Diagnostic[] } {
  const file = join(dir, `stack-${n++}.yaml`);
  writeFileSync(file, text);
  return { file, errors: loadStackFile(file).diagnostics.filter((d) => d.severity === "error") };
}

function expectConflict(text: string): Diagnostic {
  const { file, errors } = load(text);
  expect(errors, text).toHaveLength(1);
  const d = errors[0]!;
  expect(d.summary).toContain('"first"');
  expect(d.summary).toContain('"second"');
  expect(d).toMatchObject({ file, line: 9, column: 3, address: "second" });
  expect(d.detail).toContain(`"first" is declared at ${file}:6:3`);
  return d;
}

function expectAccepted(text: string): void {
  expect(load(text).errors, text).toEqual([]);
}

const OWNERSHIPS: Ownership[] = ["policy", "binding", "member"];
const KINDS: Kind[] = ["restorePlan", "endpoint"];
const pairs = KINDS.flatMap((kind) => OWNERSHIPS.flatMap((a) => OWNERSHIPS.map((b) => ({ kind, a, b }))));

/** The same object in its full form (the provider's project and location). */
const fullOf = (kind: Kind, id: string) => `projects/${PROJECT}/locations/${LOCATION}/${COLLECTION[kind]}/${id}`;

describe("overlapping scope: every pair of types on the same object is an error naming both", () => {
  it.each(pairs)("$kind: $a then $b", ({ kind, a, b }) => {
    const d = expectConflict(stackText({ kind, own: a, t: BASE }, { kind, own: b, t: BASE }));
    if (a === "policy" || b === "policy") expect(d.summary).toContain("whole IAM policy");
  });

  it.each(pairs)(
    "$kind: $a then $b, with the same condition, the name in full form and the member spelled differently",
    ({ kind, a, b }) => {
      const second: Target = {
        ...BASE,
        object: fullOf(kind, "nightly"),
        member: "user:A@Example.com",
        condition: { expression: COND.expression, description: COND.description!, title: COND.title },
      };
      expectConflict(stackText({ kind, own: a, t: { ...BASE, condition: COND } }, { kind, own: b, t: second }));
    },
  );

  it.each(KINDS)("%s: location/id and full name are the same object", (kind) => {
    expectConflict(
      stackText(
        { kind, own: "binding", t: { ...BASE, object: `${LOCATION}/nightly` } },
        { kind, own: "binding", t: { ...BASE, object: fullOf(kind, "nightly") } },
      ),
    );
  });

  it.each(KINDS)("%s: a policy conflicts with a binding of any role or condition on its object", (kind) => {
    expectConflict(
      stackText(
        { kind, own: "policy", t: BASE },
        { kind, own: "binding", t: { ...BASE, role: "roles/other", condition: COND } },
      ),
    );
    expectConflict(
      stackText(
        { kind, own: "member", t: { ...BASE, member: "group:g@example.com" } },
        { kind, own: "policy", t: { ...BASE, role: "roles/z" } },
      ),
    );
  });

  it("the summaries say what each conflict is", () => {
    const rp = (own: Ownership, t: Target = BASE) => ({ kind: "restorePlan" as const, own, t });
    expect(expectConflict(stackText(rp("binding"), rp("binding"))).summary).toContain(
      "both manage role roles/x.viewer on",
    );
    expect(expectConflict(stackText(rp("member"), rp("member"))).summary).toContain(
      "both grant user:a@example.com role roles/x.viewer",
    );
    expect(expectConflict(stackText(rp("binding"), rp("member"))).summary).toContain(
      '"first" manages the whole binding, "second" one member of it',
    );
    expect(expectConflict(stackText(rp("member"), rp("binding"))).summary).toContain(
      '"second" manages the whole binding, "first" one member of it',
    );
    expect(expectConflict(stackText(rp("policy"), rp("member"))).summary).toContain(
      '"first" manages its whole IAM policy, so "second" cannot manage part of it',
    );
    expect(expectConflict(stackText(rp("member"), rp("policy"))).summary).toContain(
      '"second" manages its whole IAM policy, so "first" cannot manage part of it',
    );
  });
});

describe("non-overlapping scope is accepted", () => {
  it.each(pairs)("$kind: $a and $b on other objects", ({ kind, a, b }) => {
    expectAccepted(stackText({ kind, own: a, t: BASE }, { kind, own: b, t: { ...BASE, object: "weekly" } }));
    // Same id, other location or project: other objects.
    expectAccepted(
      stackText({ kind, own: a, t: BASE }, { kind, own: b, t: { ...BASE, object: "europe-west1/nightly" } }),
    );
    expectAccepted(
      stackText(
        { kind, own: a, t: BASE },
        { kind, own: b, t: { ...BASE, object: `projects/other/locations/${LOCATION}/${COLLECTION[kind]}/nightly` } },
      ),
    );
  });

  it.each(OWNERSHIPS.flatMap((a) => OWNERSHIPS.map((b) => ({ a, b }))))(
    "$a of a restore plan and $b of an endpoint with the same id",
    ({ a, b }) => {
      expectAccepted(stackText({ kind: "restorePlan", own: a, t: BASE }, { kind: "endpoint", own: b, t: BASE }));
    },
  );

  const grantPairs = pairs.filter((p) => p.a !== "policy" && p.b !== "policy");

  it.each(grantPairs)("$kind: $a and $b of other roles", ({ kind, a, b }) => {
    expectAccepted(stackText({ kind, own: a, t: BASE }, { kind, own: b, t: { ...BASE, role: "roles/x.editor" } }));
  });

  it.each(grantPairs)(
    "$kind: $a and $b of other conditions (none, or another title, description or expression)",
    ({ kind, a, b }) => {
      expectAccepted(stackText({ kind, own: a, t: BASE }, { kind, own: b, t: { ...BASE, condition: COND } }));
      expectAccepted(stackText({ kind, own: a, t: { ...BASE, condition: COND } }, { kind, own: b, t: BASE }));
      for (const other of [
        { ...COND, title: "other" },
        { ...COND, description: "other" },
        { title: COND.title, expression: COND.expression },
        { ...COND, expression: "true" },
      ]) {
        expectAccepted(
          stackText(
            { kind, own: a, t: { ...BASE, condition: COND } },
            { kind, own: b, t: { ...BASE, condition: other } },
          ),
        );
      }
    },
  );

  it.each(KINDS)("%s: two members of one binding that are different principals", (kind) => {
    expectAccepted(
      stackText(
        { kind, own: "member", t: BASE },
        { kind, own: "member", t: { ...BASE, member: "user:b@example.com" } },
      ),
    );
    expectAccepted(
      stackText(
        { kind, own: "member", t: BASE },
        { kind, own: "member", t: { ...BASE, member: "group:a@example.com" } },
      ),
    );
  });
});

// --- `${…}` values: caught once resolved, at plan time -----------------------------------------

const LAKE_WITH_PLAN: Federation = { ...LAKE, labels: { owner: "data-eng", plan: "nightly", role: "roles/x.viewer" } };
const LAKE_VAR = `variables:
  lake:
    fn::invoke:
      function: cloudnative:metastore/v1alpha:getFederation
      arguments: { federationId: lake, location: ${LOCATION} }
`;

/** A CloudPort over a fixed world that records every call in order, writes included. */
function recordingCloud(policies: Record<string, Policy>) {
  const calls: string[] = [];
  const port: CloudPort = {
    getIamPolicy: async (kind, name) => (
      calls.push(`getIamPolicy ${kind} ${name}`),
      policies[name] ? structuredClone(policies[name]) : undefined
    ),
    getFederation: async (name) => {
      calls.push(`getFederation ${name}`);
      if (name !== FED) throw Object.assign(new Error("not found"), { status: "NOT_FOUND" });
      return structuredClone(LAKE_WITH_PLAN);
    },
    modifyPolicy: async (kind, name) => {
      calls.push(`modifyPolicy ${kind} ${name}`);
      throw new Error("a plan never writes");
    },
  };
  return { port, calls };
}

async function planOf(resources: string) {
  const text = `${STACK_HEAD}${LAKE_VAR}resources:\n${resources}`;
  const cloud = recordingCloud({
    [fullOf("restorePlan", "nightly")]: { etag: "e", bindings: [] },
    [fullOf("restorePlan", "weekly")]: { etag: "w", bindings: [] },
  });
  const r = await plan(stackOf(text), undefined, cloud.port, planOptions());
  return { ...r, errors: r.diagnostics.filter((d) => d.severity === "error"), calls: cloud.calls };
}

describe("conflicts of interpolated values are caught at plan time, with no write", () => {
  const rp = (own: Ownership) => TOKENS.restorePlan[own];

  it("two members that resolve to the same grant", async () => {
    const r = await planOf(`  first:
    type: ${rp("member")}
    properties: { name: nightly, role: roles/x.viewer, member: "user:\${lake.labels.owner}@example.com" }
  second:
    type: ${rp("member")}
    properties: { name: "\${lake.labels.plan}", role: roles/x.viewer, member: "user:DATA-ENG@example.com" }
`);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ address: "second", line: 14, column: 3 });
    expect(r.errors[0]!.summary).toContain('"first" and "second"');
    expect(r.errors[0]!.detail).toContain('"first" is declared at /virtual/stack.yaml:11:3');
    expect(r.plan.applyable).toBe(false);
    // The values were known only after the federation was read; no policy was written.
    expect(r.calls).toContain(`getFederation ${FED}`);
    // Reads do happen first (the federation, and the read-ahead of the restore plan's policy,
    // whose name is literal in "first"): the conflict is known only once values are resolved.
    expect(r.calls.every((c) => c.startsWith("getIamPolicy ") || c.startsWith("getFederation "))).toBe(true);
    expect(r.calls.filter((c) => c.startsWith("modifyPolicy"))).toEqual([]);
  });

  it("a literal policy and a binding whose role is interpolated", async () => {
    const r = await planOf(`  first:
    type: ${rp("policy")}
    properties: { name: nightly, bindings: [{ role: roles/x.editor, members: ["user:a@example.com"] }] }
  second:
    type: ${rp("binding")}
    properties: { name: nightly, role: "\${lake.labels.role}", members: ["user:b@example.com"] }
`);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ address: "second", line: 14, column: 3 });
    expect(r.errors[0]!.summary).toContain("whole IAM policy");
    expect(r.calls.filter((c) => c.startsWith("modifyPolicy"))).toEqual([]);
  });

  it("interpolated values that resolve to different grants are accepted", async () => {
    const r = await planOf(`  first:
    type: ${rp("binding")}
    properties: { name: nightly, role: roles/x.editor, members: ["user:a@example.com"] }
  second:
    type: ${rp("member")}
    properties: { name: nightly, role: "\${lake.labels.role}", member: "user:b@example.com" }
`);
    expect(r.errors).toEqual([]);
    expect(r.calls.filter((c) => c.startsWith("modifyPolicy"))).toEqual([]);
  });
});

describe("conflicts of resources whose other values are known only during apply", () => {
  const rp = (own: Ownership) => TOKENS.restorePlan[own];
  // "seed" is created by this plan, so its etag is unknown until apply.
  const SEED = `  seed:
    type: ${rp("binding")}
    properties: { name: weekly, role: roles/x.viewer, members: ["user:s@example.com"] }
`;

  it("a policy whose bindings wait on apply still claims its whole object", async () => {
    const r = await planOf(`${SEED}  first:
    type: ${rp("policy")}
    properties: { name: nightly, bindings: [{ role: roles/x.editor, members: ["user:\${seed.etag}@example.com"] }] }
  second:
    type: ${rp("member")}
    properties: { name: nightly, role: roles/x.viewer, member: "user:b@example.com" }
`);
    expect(r.errors).toHaveLength(1);
    // Planned in dependency order ("first" waits for "seed"), so "second" holds the claim first.
    expect(r.errors[0]!.summary).toMatch(/"second" and "first"/);
    expect(r.calls.filter((c) => c.startsWith("modifyPolicy"))).toEqual([]);
  });

  it("a binding whose members wait on apply still claims its role and condition", async () => {
    const r = await planOf(`${SEED}  first:
    type: ${rp("binding")}
    properties: { name: nightly, role: roles/x.viewer, members: ["user:\${seed.etag}@example.com"] }
  second:
    type: ${rp("binding")}
    properties: { name: nightly, role: roles/x.viewer, members: ["user:b@example.com"] }
`);
    expect(r.errors).toHaveLength(1);
    // Planned in dependency order ("first" waits for "seed"), so "second" holds the claim first.
    expect(r.errors[0]!.summary).toMatch(/"second" and "first"/);
  });

  it("a member whose identity waits on apply claims nothing yet", async () => {
    const r = await planOf(`${SEED}  first:
    type: ${rp("member")}
    properties: { name: nightly, role: roles/x.viewer, member: "user:\${seed.etag}@example.com" }
  second:
    type: ${rp("member")}
    properties: { name: nightly, role: roles/x.viewer, member: "user:b@example.com" }
`);
    expect(r.errors).toEqual([]);
  });
});
