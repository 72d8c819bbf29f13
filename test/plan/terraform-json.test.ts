// Issue 14: the plan JSON of every kind of action decodes with a decoder faithful to
// hashicorp/terraform-json's types (test/support/terraform-json-decoder.ts), validates against
// schemas/terraform-plan.schema.json, and says what the plan text says.
import { describe, expect, it } from "vitest";
import type { Plan, TerraformPlan, TfChange, TfResourceChange } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { toTerraformPlanJson, terraformPlanFailure } from "../../src/plan/terraform-json.js";
import { planLines } from "../../src/cli/render/plan-text.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { validate } from "../../src/schemas/index.js";
import {
  bindingState,
  BINDING,
  fakeCloud,
  makeState,
  planOptions,
  RP,
  STACK_HEAD,
  stackOf,
} from "../fixtures/builders.js";
import { deferredReadPlan, mixedPlan, noChangesPlan, quickstartPlan } from "../cli/plans.js";
import { DecodeError, decodePlan } from "../support/terraform-json-decoder.js";

const IMPORT_STACK = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:keep@x.com] }
    options: { import: "${RP} roles/gkebackup.viewer" }
  admins:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.admin, members: [user:a@x.com, user:b@x.com] }
    options: { import: "${RP} roles/gkebackup.admin" }
`;

async function importPlan(): Promise<Plan> {
  const cloud = fakeCloud({
    policies: {
      [RP]: {
        etag: "E1",
        bindings: [
          { role: "roles/gkebackup.viewer", members: ["user:keep@x.com"] },
          { role: "roles/gkebackup.admin", members: ["user:a@x.com"] },
        ],
      },
    },
  });
  return (await plan(stackOf(IMPORT_STACK), undefined, cloud.port, planOptions())).plan;
}

async function destroyPlan(): Promise<Plan> {
  const text = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:keep@x.com] }
outputs:
  viewersId: \${viewers.id}
`;
  const state = makeState(
    "t",
    [bindingState("viewers", { name: RP, role: "roles/gkebackup.viewer", members: ["user:keep@x.com"] }, "E1")],
    { viewersId: `${RP} roles/gkebackup.viewer` },
  );
  const cloud = fakeCloud({
    policies: { [RP]: { etag: "E1", bindings: [{ role: "roles/gkebackup.viewer", members: ["user:keep@x.com"] }] } },
  });
  return (await plan(stackOf(text), state, cloud.port, planOptions({ destroy: true }))).plan;
}

const HEADER: Record<string, string> = {
  create: "will be created",
  update: "will be updated in-place",
  replace: "must be replaced",
  delete: "will be destroyed",
  read: "will be read during apply",
};
const kindOf = (c: TfChange) => (c.actions.length === 2 ? "replace" : c.actions[0]!);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The lines of the text's block for a resource change: from its "# address" header to "    }". */
function block(text: string, header: string): string {
  const start = text.indexOf(`\n  # ${header}`);
  expect(start, `no block "# ${header}" in:\n${text}`).toBeGreaterThanOrEqual(0);
  return text.slice(start, text.indexOf("\n    }", start));
}

/** Each attribute the JSON has for a change is shown in the text as the JSON says it. */
function expectAttributes(b: string, rc: TfResourceChange): void {
  const kind = kindOf(rc.change);
  const after = isObj(rc.change.after) ? rc.change.after : {};
  const before = isObj(rc.change.before) ? rc.change.before : {};
  const unknown = isObj(rc.change.after_unknown) ? rc.change.after_unknown : {};
  for (const key of new Set([...Object.keys(after), ...Object.keys(before)])) {
    const [a, was] = [after[key], before[key]];
    const value = kind === "delete" ? was : a;
    if (kind === "no-op")
      expect(b).toMatch(new RegExp(`\\s${key}\\s+= ${escape(JSON.stringify(a))}`)); // an import that changes nothing
    else if (Array.isArray(value))
      for (const m of value)
        expect(b).toMatch(new RegExp(`${kind === "delete" ? "-" : "[ +]"} ${escape(JSON.stringify(m))},`));
    else if (isObj(value))
      for (const [k, v] of Object.entries(value))
        expect(b).toContain(
          `${k.padEnd(Object.keys(value).reduce((n, x) => Math.max(n, x.length), 0))} = ${JSON.stringify(v)}`,
        );
    else if (unknown[key] === true)
      expect(b).toMatch(
        new RegExp(
          `[+~] ${key}\\s+= ${kind === "create" ? "" : `${escape(JSON.stringify(was))} -> `}\\(known after apply\\)`,
        ),
      );
    else if (kind === "create") expect(b).toMatch(new RegExp(`\\+ ${key}\\s+= ${escape(JSON.stringify(a))}`));
    else if (kind === "delete") expect(b).toMatch(new RegExp(`- ${key}\\s+= ${escape(JSON.stringify(was))} -> null`));
    else if (typeof a === "string" && a !== was)
      expect(b).toMatch(
        new RegExp(
          `~ ${key}\\s+= ${escape(JSON.stringify(was))} -> ${escape(JSON.stringify(a))}` +
            `${rc.change.replace_paths?.some((p) => p[0] === key) ? " # forces replacement" : ""}`,
        ),
      );
  }
}

/** What the plan text says, checked against the JSON (resource by resource, drift, counts, outputs). */
function expectSameAsText(json: TerraformPlan, text: string): void {
  const counts = { import: 0, add: 0, change: 0, destroy: 0 };
  for (const rc of json.resource_changes) {
    const kind = kindOf(rc.change);
    if (rc.change.importing) counts.import++;
    if (kind === "create" || kind === "replace") counts.add++;
    if (kind === "update") counts.change++;
    if (kind === "delete" || kind === "replace") counts.destroy++;
    if (kind === "no-op" && !rc.change.importing) {
      expect(text).not.toContain(`# ${rc.address} `);
      continue;
    }
    const header = rc.change.importing
      ? `${rc.address} will be imported${kind === "update" ? " and updated in-place" : ""}`
      : `${rc.address} ${HEADER[kind]}`;
    const b = block(text, header);
    expect(b).toContain(`${rc.mode === "data" ? "data" : "resource"} "${rc.type}" "${rc.name}" {`);
    if (kind === "read") expect(b).toContain("(all attributes known after apply)");
    else expectAttributes(b, rc);
  }
  if (counts.import + counts.add + counts.change + counts.destroy)
    expect(text).toContain(
      `Plan: ${counts.import} to import, ${counts.add} to add, ` +
        `${counts.change} to change, ${counts.destroy} to destroy.`,
    );
  for (const d of json.resource_drift)
    expect(text).toContain(`# ${d.address} ${d.change.actions[0] === "delete" ? "has been deleted" : "has changed"}`);
  for (const [name, oc] of Object.entries(json.output_changes)) {
    if (oc.actions[0] === "no-op") continue;
    const shown =
      oc.after_unknown === true
        ? "(known after apply)"
        : JSON.stringify(oc.actions[0] === "delete" ? oc.before : oc.after);
    expect(text.slice(text.indexOf("Changes to Outputs:"))).toMatch(new RegExp(`[+~-] ${name}\\s+= ${escape(shown)}`));
  }
}

const KINDS: [string, () => Promise<Plan>, (j: TerraformPlan) => void][] = [
  [
    "create, a data source read while planning, outputs",
    quickstartPlan,
    (j) => {
      expect(j.resource_changes.map((c) => c.change.actions)).toEqual([["create"], ["create"], ["create"]]);
      const lake = j.prior_state!.values.root_module.resources.find((r) => r.mode === "data")!;
      expect(lake).toMatchObject({
        address: "lake",
        type: "cloudnative:metastore/v1alpha:getFederation",
        values: j.variables.lake!.value as object,
      });
      expect(j.planned_values.outputs.lakeEndpoint).toEqual({
        sensitive: false,
        value: (lake.values as { endpointUri: string }).endpointUri,
        type: "string",
      });
      expect(j.configuration.root_module.resources.find((r) => r.address === "invoker")!.expressions.member).toEqual({
        references: ["lake.labels.owner", "lake.labels", "lake"],
      });
    },
  ],
  [
    "update, replace, delete, drift, a re-create",
    mixedPlan,
    (j) => {
      expect(j.resource_changes.map((c) => [c.address, c.change.actions, c.action_reason])).toEqual([
        ["viewers", ["update"], undefined],
        ["admins", ["create", "delete"], "replace_because_cannot_update"],
        ["invoker", ["create"], undefined],
        ["gone", ["delete"], "delete_because_no_resource_config"],
      ]);
      expect(j.resource_drift.map((c) => [c.address, c.change.actions])).toEqual([
        ["admins", ["update"]],
        ["invoker", ["delete"]],
      ]);
      expect(j.converge.resource_changes.find((c) => c.address === "invoker")!.action_reason).toBe(
        "create_because_gone",
      );
      // invoker is gone
      expect(j.prior_state!.values.root_module.resources.map((r) => r.address)).toEqual(["admins", "gone", "viewers"]);
    },
  ],
  [
    "no-op",
    noChangesPlan,
    (j) => {
      expect(j.resource_changes.map((c) => c.change.actions)).toEqual([["no-op"]]);
      expect(j.applyable).toBe(false);
      expect(j.planned_values.root_module.resources.map((r) => r.address)).toEqual(["viewers"]);
    },
  ],
  [
    "deferred read",
    deferredReadPlan,
    (j) => {
      const read = j.resource_changes.find((c) => c.mode === "data")!;
      expect(read).toMatchObject({
        address: "lake",
        action_reason: "read_because_dependency_pending",
        change: { actions: ["read"], after_unknown: true },
      });
      expect(j.prior_state).toBeUndefined();
      expect(j.relevant_attributes).toContainEqual({ resource: "viewers", attribute: ["etag"] });
    },
  ],
  [
    "import, import and update",
    importPlan,
    (j) => {
      expect(j.resource_changes.map((c) => [c.change.actions, c.change.importing])).toEqual([
        [["no-op"], { id: `${RP} roles/gkebackup.viewer` }],
        [["update"], { id: `${RP} roles/gkebackup.admin` }],
      ]);
      expect(j.applyable).toBe(true);
    },
  ],
  [
    "destroy plan, output deleted",
    destroyPlan,
    (j) => {
      expect(j.resource_changes.map((c) => c.change.actions)).toEqual([["delete"]]);
      expect(j.output_changes.viewersId!.actions).toEqual(["delete"]);
      expect(j.planned_values.root_module.resources).toEqual([]);
      expect(j.prior_state!.values.outputs.viewersId).toEqual({
        sensitive: false,
        value: `${RP} roles/gkebackup.viewer`,
        type: "string",
      });
      expect(j.converge.options.destroy).toBe(true);
    },
  ],
];

describe("Terraform's plan JSON of every kind of action", () => {
  it.each(KINDS)(
    "%s: decodes as terraform-json's Plan, validates, and says what the text says",
    async (_, make, specific) => {
      const p = await make();
      const json = toTerraformPlanJson(p);
      const parsed = JSON.parse(JSON.stringify(json)) as TerraformPlan;
      expect(() => decodePlan(parsed)).not.toThrow();
      expect(validate("terraform-plan.schema.json", parsed)).toEqual([]);
      expectSameAsText(parsed, toPlain(planLines(p)));
      specific(parsed);
    },
  );

  it("a plan without a plan (errors) decodes too", () => {
    const failure = JSON.parse(JSON.stringify(terraformPlanFailure([{ severity: "error", summary: "bad" }])));
    expect(() => decodePlan(failure)).not.toThrow();
    expect(validate("terraform-plan.schema.json#/definitions/TerraformPlanFailure", failure)).toEqual([]);
  });
});

describe("the decoder refuses what terraform-json would not read", () => {
  const good = async () =>
    JSON.parse(JSON.stringify(toTerraformPlanJson(await mixedPlan()))) as Record<string, unknown> & TerraformPlan;
  it.each([
    [
      "a prior_state without format_version (converge's JSON before issue 14)",
      (p: TerraformPlan) => void ((p as { prior_state: unknown }).prior_state = { lineage: "l", serial: 3 }),
      /format version is missing|has no member "lineage"/,
    ],
    [
      "format_version 2.0",
      (p: TerraformPlan) => void ((p as { format_version: string }).format_version = "2.0"),
      /does not satisfy/,
    ],
    [
      "a string schema_version",
      (p: TerraformPlan) =>
        void ((p.planned_values.root_module.resources[0] as { schema_version: unknown }).schema_version = "0"),
      /cannot unmarshal string into a Go uint64/,
    ],
    [
      "a member Terraform has not, outside converge",
      (p: TerraformPlan) => void ((p.resource_changes[0] as unknown as Record<string, unknown>).policy = "x"),
      /ResourceChange has no member "policy"/,
    ],
    [
      "a change without before",
      (p: TerraformPlan) => void delete (p.resource_changes[0]!.change as { before?: unknown }).before,
      /Change.before is missing/,
    ],
    [
      "an expression that is neither",
      (p: TerraformPlan) =>
        void ((p.configuration.root_module.resources[0]!.expressions as Record<string, unknown>).role = { value: 1 }),
      /ExpressionData has no member "value"/,
    ],
    [
      "an output type cty cannot read",
      (p: TerraformPlan) =>
        void ((p.prior_state!.values.outputs as Record<string, unknown>).x = { sensitive: false, type: "text" }),
      /invalid primitive type name/,
    ],
  ])("%s", async (_, spoil, message) => {
    const p = await good();
    expect(() => decodePlan(p)).not.toThrow();
    spoil(p);
    expect(() => decodePlan(p)).toThrow(DecodeError);
    expect(() => decodePlan(p)).toThrow(message);
  });
});
