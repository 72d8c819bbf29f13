// Issue 14: `apply --json` (and `destroy --json`, `plan --json-stream`) stream Terraform's
// machine-readable UI: one message per line with @level, @message, @module, @timestamp and type.
// Every type appears here, and every line validates against schemas/events.schema.json and
// decodes as hashicorp/terraform-json decodes Terraform's lines (uiEvents). `apply --json` without
// --auto-approve or a plan file is refused before any work, as Terraform refuses it.
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EmulatorWorld, UiEvent } from "../../src/generated/schemas.js";
import { SCHEMAS_DIR } from "../../src/schemas/index.js";
import { FED } from "../fixtures/builders.js";
import {
  expectExit,
  runCli,
  setPolicyOutOfBand,
  startCli,
  stats,
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";
import { addMember, bindingYaml, clearFaults, ep, M, memberYaml, rp, setFaults, uiEvents } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["plan-a", "plan-b", "plan-c"].map((id) => ({ name: rp(id), policy: { bindings: [] } })),
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
  federations: [{ name: FED, labels: { owner: "data-eng" }, endpointUri: "thrift://10.0.0.7:9083", state: "ACTIVE" }],
};

const HEAD = `name: events
provider:
  project: my-project
  location: us-central1
variables:
  lake:
    fn::invoke:
      function: cloudnative:metastore/v1alpha:getFederation
      arguments: { federationId: lake, location: us-central1 }
resources:
`;
const INVOKER = memberYaml(
  "invoker",
  "churn",
  "roles/aiplatform.user",
  "serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com",
);
const FIRST =
  HEAD +
  bindingYaml("a", "plan-a", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  bindingYaml("b", "plan-b", "roles/gkebackup.viewer", ["user:bob@example.com"]) +
  INVOKER +
  "outputs:\n  lakeEndpoint: ${lake.endpointUri}\n";
// a changes, b goes, and two new ones: a member on the endpoint (whose writes will be refused)
// and a binding that depends on it.
const SECOND =
  HEAD +
  bindingYaml("a", "plan-a", "roles/gkebackup.viewer", ["user:alice@example.com", "user:ann@example.com"]) +
  INVOKER +
  memberYaml("reader", "churn", "roles/aiplatform.viewer", "user:rita@example.com") +
  bindingYaml(
    "after",
    "plan-c",
    "roles/gkebackup.viewer",
    ["user:carl@example.com"],
    "    options:\n      dependsOn: [reader]\n",
  );

const ws = useEmulatorWorkspace(SEED, "converge-apply-json-");
const file = (name: string) => join(ws.dir, name);
/** Every type seen in this file, for the schema's test. */
const seen = new Set<string>();
/** The checked messages of a stream (uiEvents), their types noted. */
const streamed = (stdout: string) => {
  const events = uiEvents(stdout);
  for (const e of events) seen.add(e.type);
  return events;
};
const types = (events: UiEvent[]) => new Set(events.map((e) => e.type));
const ofType = <T extends UiEvent["type"]>(events: UiEvent[], type: T) =>
  events.filter((e): e is Extract<UiEvent, { type: T }> => e.type === type);

afterEach(() => clearFaults(ws.emu));

describe("apply --json streams Terraform's machine-readable UI", () => {
  it(
    "first apply: version, the data source read, planned changes, summaries, " +
      "progress, retries, policy writes, saves, outputs",
    async () => {
      await writeFile(file("stack.yaml"), FIRST);
      // Slow restore plan writes (apply_progress every 0.2s) that sometimes fail for a moment (retry).
      await setFaults(ws.emu, { latencyMs: 700, errorRates: { UNAVAILABLE: 0.5 }, seed: 4, methods: [M.rpSet] });
      const r = await runCli(
        [
          "apply",
          "--json",
          "--auto-approve",
          "--progress-interval",
          "0.2",
          "-f",
          file("stack.yaml"),
          "--state",
          file("state.json"),
        ],
        { emulator: ws.emu, timeoutMs: 60_000 },
      );
      expectExit(r, 0);
      const events = streamed(r.stdout);
      expect(events[0]).toMatchObject({ type: "version", "@module": "converge.ui", "@level": "info", ui: "1.2" });
      for (const e of events) expect(e["@timestamp"]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      for (const t of [
        "apply_start",
        "apply_progress",
        "apply_complete",
        "planned_change",
        "change_summary",
        "access_summary",
        "retry_summary",
        "retry",
        "policy_write",
        "state_saved",
        "apply_result",
        "outputs",
      ])
        expect(types(events), t).toContain(t);
      // The data source, read while planning, is an apply of action read.
      expect(ofType(events, "apply_complete")[0]!.hook).toMatchObject({
        resource: {
          addr: "lake",
          resource_type: "cloudnative:metastore/v1alpha:getFederation",
          implied_provider: "cloudnative",
          module: "",
          resource_key: null,
        },
        action: "read",
        id_key: "name",
      });
      expect(ofType(events, "planned_change").map((e) => [e.change.resource.addr, e.change.action])).toEqual([
        ["a", "create"],
        ["b", "create"],
        ["invoker", "create"],
      ]);
      const summaries = ofType(events, "change_summary");
      expect(summaries.map((e) => e.changes)).toEqual([
        { add: 3, change: 0, import: 0, remove: 0, operation: "plan" },
        { add: 3, change: 0, import: 0, remove: 0, operation: "apply" },
      ]);
      expect(summaries[1]!["@message"]).toBe("Apply complete! Resources: 3 added, 0 changed, 0 destroyed.");
      const progress = ofType(events, "apply_progress");
      expect(progress[0]!.hook.action).toBe("create");
      expect(progress[0]!.hook.elapsed_seconds).toBeGreaterThan(0);
      const retries = ofType(events, "retry");
      expect(retries[0]!.retry).toMatchObject({
        reason: "transient",
        status: "UNAVAILABLE",
        call: "setIamPolicy",
        max_attempts: 10,
      });
      expect(retries[0]!["@level"]).toBe("warn");
      expect(ofType(events, "retry_summary").map((e) => e.retries)).toEqual([
        { operation: "plan", total: 0, causes: {} },
        { operation: "apply", total: retries.length, causes: { UNAVAILABLE: retries.length } },
      ]);
      expect(ofType(events, "access_summary")[0]!.access).toMatchObject({ granted: 3, revoked: 0 });
      expect(ofType(events, "apply_result")[0]!.result).toEqual({
        status: "complete",
        failed: [],
        skipped: [],
        serial: ofType(events, "state_saved").at(-1)!.state.serial,
      });
      expect(events.at(-1)).toMatchObject({
        type: "outputs",
        outputs: { lakeEndpoint: { sensitive: false, type: "string", value: "thrift://10.0.0.7:9083" } },
      });
      expect(r.stderr).toBe("");
    },
  );

  it(
    "second apply: refresh, drift, a refused write (apply_errored, its " +
      "diagnostic), the change that depended on it skipped",
    async () => {
      await setPolicyOutOfBand(ws.emu, rp("plan-a"), (p) =>
        addMember(p, "roles/gkebackup.viewer", "user:mallory@example.com"),
      );
      await writeFile(file("stack.yaml"), SECOND);
      await setFaults(ws.emu, { errorRates: { PERMISSION_DENIED: 1 }, methods: [M.epSet] });
      const r = await runCli(
        ["apply", "--json", "--auto-approve", "-f", file("stack.yaml"), "--state", file("state.json")],
        { emulator: ws.emu, timeoutMs: 60_000 },
      );
      expectExit(r, 1);
      const events = streamed(r.stdout);
      for (const t of [
        "refresh_start",
        "refresh_complete",
        "resource_drift",
        "apply_errored",
        "apply_skipped",
        "diagnostic",
      ])
        expect(types(events), t).toContain(t);
      expect(
        ofType(events, "refresh_complete")
          .map((e) => e.hook.resource.addr)
          .sort(),
      ).toEqual(["a", "b", "invoker"]);
      expect(ofType(events, "refresh_start")[0]!.hook).toMatchObject({ id_key: "policy" });
      expect(ofType(events, "resource_drift").map((e) => e.change)).toEqual([
        expect.objectContaining({ resource: expect.objectContaining({ addr: "a" }), action: "update" }),
      ]);
      expect(
        ofType(events, "planned_change").map((e) => [e.change.resource.addr, e.change.action, e.change.reason]),
      ).toEqual([
        ["a", "update", undefined],
        ["reader", "create", undefined],
        ["after", "create", undefined],
        ["b", "delete", "delete_because_no_resource_config"],
      ]);
      expect(ofType(events, "apply_errored").map((e) => e.hook.resource.addr)).toEqual(["reader"]);
      expect(ofType(events, "apply_skipped").map((e) => e.hook.resource.addr)).toEqual(["after"]);
      const diag = ofType(events, "diagnostic").find((e) => e.diagnostic.address === "reader")!;
      expect(diag).toMatchObject({
        "@level": "error",
        diagnostic: {
          severity: "error",
          summary: `reader: cannot update the IAM policy of ${ep("churn")}`,
          detail: expect.stringContaining("PERMISSION_DENIED"),
        },
      });
      expect(r.stderr).toContain(diag.diagnostic.summary);
      expect(ofType(events, "apply_result")[0]!.result).toMatchObject({
        status: "failed",
        failed: ["reader"],
        skipped: ["after"],
      });
      expect(ofType(events, "change_summary").at(-1)!.changes).toEqual({
        add: 0,
        change: 1,
        import: 0,
        remove: 1,
        operation: "apply",
      });
      expect(events.at(-1)!.type).toBe("change_summary"); // no outputs after a failed apply
    },
  );

  it("Ctrl-C: the change started but not written is apply_interrupted", async () => {
    // With --parallelism 1, the bindings on plan-c and plan-b are written one after the other: the
    // second has started (queued behind the first) when the signal comes.
    await writeFile(
      file("interrupt.yaml"),
      HEAD.replace("events", "interrupt") +
        bindingYaml("first", "plan-c", "roles/gkebackup.admin", ["user:x@example.com"]) +
        bindingYaml("second", "plan-b", "roles/gkebackup.restoreUser", ["user:y@example.com"]),
    );
    await setFaults(ws.emu, { latencyMs: 1500, methods: [M.rpSet] });
    const run = startCli(
      [
        "apply",
        "--json",
        "--auto-approve",
        "--parallelism",
        "1",
        "-f",
        file("interrupt.yaml"),
        "--state",
        file("interrupt.json"),
      ],
      { emulator: ws.emu },
    );
    await run.waitFor('"type":"policy_write"');
    run.child.kill("SIGINT");
    const r = await run.done;
    expectExit(r, 130);
    const events = streamed(r.stdout);
    expect(ofType(events, "apply_interrupted").map((e) => e.hook.resource.addr)).toHaveLength(1);
    expect(ofType(events, "apply_result")[0]!.result.status).toBe("interrupted");
    expect(ofType(events, "change_summary").at(-1)!["@message"]).toMatch(/^Apply interrupted\. Resources: 1 added/);
  });

  it("destroy --json: the destroy's change summary", async () => {
    await clearFaults(ws.emu);
    await writeFile(file("destroy.yaml"), FIRST.replace("name: events", "name: gone"));
    expectExit(
      await runCli(["apply", "--auto-approve", "-f", file("destroy.yaml"), "--state", file("destroy.json")], {
        emulator: ws.emu,
      }),
      0,
    );
    const r = await runCli(
      ["destroy", "--json", "--auto-approve", "-f", file("destroy.yaml"), "--state", file("destroy.json")],
      { emulator: ws.emu },
    );
    expectExit(r, 0);
    const events = streamed(r.stdout);
    expect(ofType(events, "planned_change").map((e) => e.change.action)).toEqual(["delete", "delete", "delete"]);
    expect(ofType(events, "change_summary").at(-1)).toMatchObject({
      "@message": "Destroy complete! Resources: 3 destroyed.",
      changes: { remove: 3, operation: "destroy" },
    });
  });

  it("plan --json-stream: the plan's progress and changes, no plan document", async () => {
    const r = await runCli(
      ["plan", "--json-stream", "--detailed-exitcode", "-f", file("stack.yaml"), "--state", file("state.json")],
      { emulator: ws.emu },
    );
    expectExit(r, 2);
    const events = streamed(r.stdout);
    expect(events[0]!.type).toBe("version");
    expect(ofType(events, "change_summary").map((e) => e.changes.operation)).toEqual(["plan"]);
    expect(types(events)).not.toContain("apply_result");
    expect(ofType(events, "planned_change").map((e) => e.change.resource.addr)).toContain("reader");
  });
});

describe("schemas/events.schema.json", () => {
  it("every type it describes appeared in the streams above", () => {
    const schema = JSON.parse(readFileSync(join(SCHEMAS_DIR, "events.schema.json"), "utf8")) as {
      oneOf: { $ref: string }[];
      definitions: Record<string, { properties: { type: { const: string } } }>;
    };
    const described = schema.oneOf.map((o) => schema.definitions[o.$ref.split("/").pop()!]!.properties.type.const);
    expect(described).toHaveLength(20);
    expect(described.filter((t) => !seen.has(t))).toEqual([]);
  });
});

describe("apply --json without --auto-approve or a plan file", () => {
  it.each([["apply"], ["destroy"]])(
    "%s is refused before any work: no lock, no read, the reason as a diagnostic line",
    async (cmd) => {
      const before = totalRequests(await stats(ws.emu));
      const state = file(`refused-${cmd}.json`);
      const r = await runCli([cmd, "--json", "-f", file("stack.yaml"), "--state", state], { emulator: ws.emu });
      expectExit(r, 1);
      expect(totalRequests(await stats(ws.emu))).toBe(before);
      expect(existsSync(state) || existsSync(`${state}.lock`)).toBe(false);
      const events = streamed(r.stdout);
      expect(events.map((e) => e.type)).toEqual(["version", "diagnostic"]);
      expect(ofType(events, "diagnostic")[0]!.diagnostic.summary).toBe(
        `${cmd} --json needs --auto-approve${cmd === "apply" ? " or a plan file" : ""}`,
      );
      expect(r.stderr).toContain(`Error: ${cmd} --json needs --auto-approve`);
    },
  );
});
