// `converge plan --json`: stdout is exactly one JSON document, Terraform's plan JSON (issue 14):
// it validates against schemas/terraform-plan.schema.json and decodes as hashicorp/terraform-json
// decodes Terraform's (a replacement with replace_paths, drift, output changes, the prior state
// with its format_version, the configuration); converge's own data is under `converge`;
// diagnostics go to stderr. --out saves converge's plan, from which `show --json` prints the same
// document. With errors, stdout holds the errored plan, or a plan with only the diagnostics.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld, Plan, TerraformPlan, TerraformPlanFailure } from "../../src/generated/schemas.js";
import { toTerraformPlanJson } from "../../src/plan/terraform-json.js";
import { validate } from "../../src/schemas/index.js";
import { decodePlan } from "../support/terraform-json-decoder.js";
import { BINDING, EP, FED, LAKE_INVOKER, RP, bindingState, lakeVariable, makeState } from "../fixtures/builders.js";
import { expectExit, livePolicy, runCli, stats, useStackWorkspace, writeState } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: RP,
      policy: {
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:alice@example.com", "user:carol@example.com"] }],
      },
    },
  ],
  endpoints: [{ name: EP }],
  federations: [{ name: FED, labels: { owner: "data-eng" }, endpointUri: "thrift://10.0.0.7:9083", state: "ACTIVE" }],
};

// The binding's role changed from viewer (state) to admin (stack): a replacement. Carol was added
// out of band (live vs state): drift.
const STACK = `name: js
provider:
  project: my-project
  location: us-central1
variables:
${lakeVariable()}resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.admin
      members: [user:alice@example.com]
${LAKE_INVOKER}outputs:
  viewersId: \${viewers.id}
  lakeEndpoint: \${lake.endpointUri}
`;

const ws = useStackWorkspace(SEED, "converge-json-", STACK, "js.json");

beforeAll(async () => {
  const etag = (await livePolicy(ws.emu, RP)).etag!;
  await writeState(
    ws.statePath,
    makeState(
      "js",
      [
        bindingState(
          "viewers",
          { name: RP, role: "roles/gkebackup.viewer", members: ["user:alice@example.com"] },
          etag,
        ),
      ],
      { viewersId: `${RP} roles/gkebackup.viewer` },
    ),
  );
});

describe("plan --json", () => {
  let plan: TerraformPlan;
  let stdout: string;

  beforeAll(async () => {
    const r = await runCli(
      ["plan", "-f", ws.stackFile, "--state", ws.statePath, "--json", "--out", join(ws.dir, "saved.plan.json")],
      { emulator: ws.emu, cwd: ws.dir },
    );
    expectExit(r, 0);
    expect(r.stderr).toBe("");
    stdout = r.stdout;
    plan = JSON.parse(stdout) as TerraformPlan; // throws if anything but one JSON document is on stdout
  });

  it("prints one JSON document and nothing else (no progress lines)", () => {
    expect(stdout.trimStart().startsWith("{")).toBe(true);
    expect(stdout.trimEnd().endsWith("}")).toBe(true);
    expect(stdout).not.toContain("Reading...");
    expect(stdout).not.toContain("Refreshed");
  });

  it("validates against schemas/terraform-plan.schema.json and decodes as terraform-json's Plan", () => {
    expect(validate("terraform-plan.schema.json", plan)).toEqual([]);
    expect(() => decodePlan(plan)).not.toThrow();
  });

  it("has Terraform's top-level members, converge's data under `converge`", () => {
    expect(Object.keys(plan).sort()).toEqual(
      [
        "applyable",
        "complete",
        "configuration",
        "converge",
        "errored",
        "format_version",
        "output_changes",
        "planned_values",
        "prior_state",
        "relevant_attributes",
        "resource_changes",
        "resource_drift",
        "terraform_version",
        "timestamp",
        "variables",
      ].sort(),
    );
    expect(plan).toMatchObject({ format_version: "1.2", applyable: true, complete: true, errored: false });
    expect(plan.converge.prior_state.lineage).toEqual(expect.any(String));
    expect(plan.converge.stack.name).toBe("js");
    expect(plan.variables.lake!.value).toMatchObject({ endpointUri: "thrift://10.0.0.7:9083" });
  });

  it("prior_state is the state as refreshed, with the data source read while planning", () => {
    expect(plan.prior_state!.format_version).toBe("1.0");
    const resources = plan.prior_state!.values.root_module.resources;
    expect(resources.map((r) => [r.address, r.mode])).toEqual([
      ["lake", "data"],
      ["viewers", "managed"],
    ]);
    expect(resources[1]!.values).toMatchObject({ members: ["user:alice@example.com", "user:carol@example.com"] });
    expect(plan.prior_state!.values.outputs.viewersId).toEqual({
      sensitive: false,
      value: `${RP} roles/gkebackup.viewer`,
      type: "string",
    });
  });

  it('shows the role change as a replacement with replace_paths [["role"]]', () => {
    const c = plan.resource_changes.find((x) => x.address === "viewers")!;
    expect(c.change.actions).toEqual(["create", "delete"]);
    expect(c.change.replace_paths).toEqual([["role"]]);
    expect(c.change.before).toMatchObject({
      role: "roles/gkebackup.viewer",
      members: ["user:alice@example.com", "user:carol@example.com"],
    });
    expect(c.change.after).toMatchObject({
      role: "roles/gkebackup.admin",
      members: ["user:alice@example.com"],
      etag: null,
    });
    expect(c.change.after_unknown).toMatchObject({ etag: true });
    expect(c).toMatchObject({
      type: BINDING,
      mode: "managed",
      provider_name: "converge.dev/converge/cloudnative",
      action_reason: "replace_because_cannot_update",
    });
    expect(plan.converge.resource_changes.find((x) => x.address === "viewers")).toMatchObject({ policy: RP });
  });

  it("shows a create with its after and after_unknown, and its planned values", () => {
    const c = plan.resource_changes.find((x) => x.address === "invoker")!;
    expect(c.change.actions).toEqual(["create"]);
    expect(c.change.before).toBeNull();
    expect(c.change.after).toMatchObject({
      member: "serviceAccount:data-eng@my-project.iam.gserviceaccount.com",
      name: EP,
    });
    expect(plan.planned_values.root_module.resources.find((r) => r.address === "invoker")!.values).toEqual(
      c.change.after,
    );
  });

  it("describes the stack as written in configuration, and what the changes refer to in relevant_attributes", () => {
    const invoker = plan.configuration.root_module.resources.find((r) => r.address === "invoker")!;
    expect(invoker.expressions).toMatchObject({
      name: { constant_value: "churn" },
      member: { references: ["lake.labels.owner", "lake.labels", "lake"] },
    });
    expect(plan.configuration.provider_config.cloudnative).toMatchObject({
      full_name: "converge.dev/converge/cloudnative",
      expressions: { project: { constant_value: "my-project" } },
    });
    expect(plan.relevant_attributes).toEqual([
      { resource: "lake", attribute: ["endpointUri"] },
      { resource: "lake", attribute: ["labels", "owner"] },
      { resource: "viewers", attribute: ["id"] },
    ]);
  });

  it("lists the out-of-band member as drift", () => {
    expect(plan.resource_drift).toHaveLength(1);
    const d = plan.resource_drift[0]!;
    expect(d.address).toBe("viewers");
    expect(d.change.actions).toEqual(["update"]);
    expect(d.change.before).toMatchObject({ members: ["user:alice@example.com"] });
    expect(d.change.after).toMatchObject({ members: ["user:alice@example.com", "user:carol@example.com"] });
  });

  it("lists output changes", () => {
    expect(plan.output_changes.viewersId).toMatchObject({
      actions: ["update"],
      before: `${RP} roles/gkebackup.viewer`,
    });
    expect(plan.output_changes.viewersId).toMatchObject({ after: `${RP} roles/gkebackup.admin`, after_unknown: false });
    expect(plan.output_changes.lakeEndpoint).toMatchObject({
      actions: ["create"],
      before: null,
      after: "thrift://10.0.0.7:9083",
    });
  });

  it("--out saved converge's plan, which `show --json` prints as plan --json did", async () => {
    const saved = JSON.parse(await readFile(join(ws.dir, "saved.plan.json"), "utf8")) as Plan;
    expect(validate("plan.schema.json", saved)).toEqual([]);
    expect(toTerraformPlanJson(saved)).toEqual(plan);
    expect(plan.converge.digest).toBe(saved.digest);
    const shown = await runCli(["show", "--json", join(ws.dir, "saved.plan.json")], { cwd: ws.dir });
    expectExit(shown, 0);
    expect(JSON.parse(shown.stdout)).toEqual(plan);
  });

  it("exits 2 with --detailed-exitcode, stdout still pure JSON", async () => {
    const r = await runCli(["plan", "-f", ws.stackFile, "--state", ws.statePath, "--json", "--detailed-exitcode"], {
      emulator: ws.emu,
      cwd: ws.dir,
    });
    expectExit(r, 2);
    expect(validate("terraform-plan.schema.json", JSON.parse(r.stdout))).toEqual([]);
  });

  // Issue 12: stdout still carries one JSON document when there is no plan to print.
  it("an invalid stack prints diagnostics on stderr and a plan with only them on stdout", async () => {
    const bad = join(ws.dir, "bad.yaml");
    await writeFile(bad, STACK.replace("role: roles/gkebackup.admin", "role: admin"));
    const before = await stats(ws.emu);
    const r = await runCli(["plan", "-f", bad, "--state", ws.statePath, "--json"], { emulator: ws.emu, cwd: ws.dir });
    expectExit(r, 1);
    const failure = JSON.parse(r.stdout) as TerraformPlanFailure;
    expect(validate("terraform-plan.schema.json#/definitions/TerraformPlanFailure", failure)).toEqual([]);
    expect(() => decodePlan(failure)).not.toThrow();
    expect(failure).toMatchObject({ errored: true, applyable: false });
    expect(failure.converge.diagnostics).toEqual([
      expect.objectContaining({
        line: 15,
        column: 13,
        summary: expect.stringContaining('viewers: role "admin" is not of the form'),
      }),
    ]);
    expect(r.stderr).toContain('bad.yaml:15:13: Error: viewers: role "admin" is not of the form');
    expect((await stats(ws.emu)).requests).toEqual(before.requests);
  });

  it("a plan with errors is printed whole, with errored: true, and exits 1", async () => {
    const r = await runCli(["plan", "-f", ws.stackFile, "--state", ws.statePath, "--json", "--target", "nosuch"], {
      emulator: ws.emu,
      cwd: ws.dir,
    });
    expectExit(r, 1);
    const errored = JSON.parse(r.stdout) as TerraformPlan;
    expect(validate("terraform-plan.schema.json", errored)).toEqual([]);
    expect(() => decodePlan(errored)).not.toThrow();
    expect(errored).toMatchObject({ errored: true, complete: false, applyable: false });
    expect(errored.converge.diagnostics.map((d) => d.summary)).toContain(
      "--target nosuch: no resource or variable has this address",
    );
    expect(r.stderr).toContain("Error: --target nosuch: no resource or variable has this address");
  });
});
