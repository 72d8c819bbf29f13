// The Automation API against the emulator: an inline program planned, applied and destroyed with
// events; the direct form of an invoke reads at once; the output form with an argument from a
// resource output is a deferred read in the plan, resolved during apply.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { Stack } from "../../src/automation/automation.js";
import { EndpointIamMember, RestorePlanIamBinding } from "../../src/sdk/resources.js";
import { getFederation, getFederationOutput } from "../../src/sdk/invokes.js";
import { interpolate } from "../../src/sdk/output.js";
import type { EngineEvent } from "../../src/contracts/events.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";

const SEED = new URL("../../examples/quickstart/cloud.seed.yaml", import.meta.url).pathname;
let emu: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ seedFile: SEED });
  dir = await mkdtemp(join(tmpdir(), "converge-sdk-"));
});

afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const provider = () => ({ project: "my-project", location: "us-central1", endpoint: emu.url });

describe("Stack.inline: plan, apply, destroy with events", () => {
  it("plans the program's resources, applies them and destroys them", async () => {
    const stack = await Stack.inline(
      "sdk-inline",
      (s) => {
        s.provider = provider();
        const lake = getFederationOutput({ federationId: "lake", location: "us-central1" }, { name: "lake" });
        const viewers = new RestorePlanIamBinding("viewers", {
          name: "nightly",
          role: "roles/gkebackup.viewer",
          members: ["user:carol@example.com", "group:sre@example.com"],
        });
        new EndpointIamMember(
          "invoker",
          {
            name: "churn",
            role: "roles/aiplatform.user",
            member: interpolate`serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com`,
          },
          { dependsOn: [viewers] },
        );
        s.export("viewersId", viewers.id);
        s.export("lakeEndpoint", lake.endpointUri);
      },
      { dir },
    );
    const events: EngineEvent[] = [];
    const plan = await stack.plan({ onEvent: (e) => events.push(e) });
    expect(plan.errored).toBe(false);
    expect(plan.resource_changes.map((c) => [c.address, c.change.action])).toEqual([
      ["viewers", "create"],
      ["invoker", "create"],
    ]);
    expect(events.some((e) => e.type === "read" && e.address === "lake" && e.phase === "done")).toBe(true);

    const applied: EngineEvent[] = [];
    const result = await stack.apply(plan, { onEvent: (e) => applied.push(e) });
    expect(result.failed).toEqual([]);
    expect(
      applied
        .filter((e) => e.type === "step" && e.phase === "done")
        .map((e) => (e as { address: string }).address)
        .sort(),
    ).toEqual(["invoker", "viewers"]);
    expect(applied.some((e) => e.type === "state-saved")).toBe(true);
    expect(await stack.outputs()).toEqual({
      viewersId: "projects/my-project/locations/us-central1/restorePlans/nightly roles/gkebackup.viewer",
      lakeEndpoint: "thrift://10.0.0.7:9083",
    });

    const again = await stack.plan();
    expect(again.applyable).toBe(false);

    const destroyed: EngineEvent[] = [];
    const d = await stack.destroy({ onEvent: (e) => destroyed.push(e) });
    expect(d.failed).toEqual([]);
    expect(d.state.resources).toEqual([]);
    expect(destroyed.filter((e) => e.type === "step" && e.phase === "done")).toHaveLength(2);
  });

  it("refuses a plan it did not make, and reports a duplicate name at its call site", async () => {
    const stack = await Stack.inline("sdk-other", (s) => void (s.provider = provider()), { dir });
    const plan = await stack.plan();
    await stack.apply(plan);
    await expect(stack.apply(plan)).rejects.toBeInstanceOf(UserError);
    const dup = Stack.inline(
      "sdk-dup",
      (s) => {
        s.provider = provider();
        new RestorePlanIamBinding("twice", {
          name: "nightly",
          role: "roles/gkebackup.viewer",
          members: ["user:a@example.com"],
        });
        new RestorePlanIamBinding("twice", {
          name: "nightly",
          role: "roles/gkebackup.admin",
          members: ["user:a@example.com"],
        });
      },
      { dir },
    );
    const err = (await dup.catch((e: unknown) => e)) as UserError;
    expect(err).toBeInstanceOf(UserError);
    expect(err.diagnostics[0]!.summary).toContain('duplicate name "twice"');
    expect(err.diagnostics[0]!.file).toBe(new URL(import.meta.url).pathname);
    const lines = readFileSync(new URL(import.meta.url), "utf8").split("\n");
    // The line of the second `new RestorePlanIamBinding("twice", …)` (1-based).
    const second = lines.flatMap((l, i) => (l.includes('new RestorePlanIamBinding("twice"') ? [i + 1] : []))[1]!;
    expect(err.diagnostics[0]).toMatchObject({ line: second, column: lines[second - 1]!.indexOf("new") + 1 });
  });
});

describe("a program that calls process.exit", () => {
  it("does not end the caller's process: Stack.inline throws a UserError at the call", async () => {
    const err = (await Stack.inline(
      "sdk-exit",
      (s) => {
        s.provider = provider();
        process.exit(0);
      },
      { dir },
    ).catch((e: unknown) => e)) as UserError;
    expect(err).toBeInstanceOf(UserError);
    const lines = readFileSync(new URL(import.meta.url), "utf8").split("\n");
    const line = lines.findIndex((l) => l.includes("process.exit(0);")) + 1;
    expect(err.diagnostics).toEqual([
      expect.objectContaining({
        summary: "the program called process.exit(0)",
        file: new URL(import.meta.url).pathname,
        line,
        column: lines[line - 1]!.indexOf("exit") + 1,
      }),
    ]);
    // The process's own exit is back once the program has run.
    expect(process.exit.name).not.toBe("interceptedExit");
  });
});

describe("invokes", () => {
  it("the direct form reads at once, while the program runs", async () => {
    let seen: string | undefined;
    const stack = await Stack.inline(
      "sdk-direct",
      async (s) => {
        s.provider = provider();
        const lake = await getFederation({ federationId: "lake", location: "us-central1" });
        seen = lake.labels.owner;
        new EndpointIamMember("invoker", {
          name: "churn",
          role: "roles/aiplatform.user",
          member: `serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com`,
        });
      },
      { dir },
    );
    expect(seen).toBe("data-eng");
    const plan = await stack.plan();
    // A plain value in the stack: no data source is planned.
    expect(plan.resource_changes.filter((c) => c.mode === "data")).toEqual([]);
    expect(plan.configuration?.resources?.[0]).toMatchObject({
      properties: { member: "serviceAccount:data-eng@my-project.iam.gserviceaccount.com" },
    });
  });

  it("a direct read that fails is an error at its call site", async () => {
    const err = (await Stack.inline(
      "sdk-direct-missing",
      async (s) => {
        s.provider = provider();
        await getFederation({ federationId: "nolake", location: "us-central1" });
      },
      { dir },
    ).catch((e: unknown) => e)) as UserError;
    expect(err).toBeInstanceOf(UserError);
    expect(err.diagnostics[0]).toMatchObject({
      summary:
        "cloudnative:metastore/v1alpha:getFederation: cannot read " +
        "projects/my-project/locations/us-central1/federations/nolake",
      file: new URL(import.meta.url).pathname,
    });
    expect(err.diagnostics[0]!.detail).toMatch(/NOT_FOUND|not found/i);
  });

  it("the output form with an argument from a resource output is a deferred read, resolved during apply", async () => {
    const stack = await Stack.inline(
      "sdk-deferred",
      (s) => {
        s.provider = provider();
        const viewers = new RestorePlanIamBinding("viewers", {
          name: "nightly",
          role: "roles/gkebackup.viewer",
          members: ["user:carol@example.com"],
        });
        const lake = getFederationOutput(
          { federationId: interpolate`lake-${viewers.etag}`, location: "us-central1" },
          { name: "lake" },
        );
        new EndpointIamMember("invoker", {
          name: "churn",
          role: "roles/aiplatform.user",
          member: interpolate`serviceAccount:${lake.labels.owner}@my-project.iam.gserviceaccount.com`,
        });
      },
      { dir },
    );
    const plan = await stack.plan();
    const read = plan.resource_changes.find((c) => c.address === "lake")!;
    expect(read).toMatchObject({
      mode: "data",
      change: { action: "read" },
      action_reason: "read_because_dependency_pending",
    });
    const events: EngineEvent[] = [];
    const result = await stack.apply(plan, { onEvent: (e) => events.push(e) });
    // Resolved during apply with the etag the write of viewers returned: the name is then
    // checked as any federation ID is (an etag is no valid ID, so the read stops there and its
    // dependent waits), which shows the read ran with the value known only during apply.
    const etag = result.state.resources.find((r) => r.address === "viewers")!.outputs.etag as string;
    expect(etag).toMatch(/=$/);
    expect(result.failed.map((f) => [f.address, f.diagnostic.summary])).toEqual([
      ["lake", `lake: federationId "lake-${etag}" is not a valid identifier`],
    ]);
    expect(result.state.resources.map((r) => r.address)).toEqual(["viewers"]);
    expect(events.some((e) => e.type === "step" && e.address === "viewers" && e.phase === "done")).toBe(true);
  });
});

describe("Stack.fromFile", () => {
  it("plans a YAML stack and imports an existing grant into its state", async () => {
    const file = new URL("../../examples/quickstart/stack.yaml", import.meta.url).pathname;
    const stack = await Stack.fromFile(file, { state: join(dir, "from-file", "state.json") });
    expect(stack.name).toBe("quickstart");
    const plan = await stack.plan();
    expect(plan.resource_changes.filter((c) => c.mode === "managed").map((c) => c.change.action)).toEqual([
      "create",
      "create",
      "create",
    ]);
    const done = await stack.import(
      "restoreViewers",
      "projects/my-project/locations/us-central1/restorePlans/nightly roles/gkebackup.viewer",
    );
    expect(done).toEqual({
      id: "projects/my-project/locations/us-central1/restorePlans/nightly roles/gkebackup.viewer",
      serial: 1,
    });
    await expect(stack.import("nothere", "x")).rejects.toMatchObject({
      diagnostics: [{ summary: `no resource "nothere" in ${file}` }],
    });
  });
});

describe("Stack.inline: .apply on a value known only during apply", () => {
  it("runs in the caller's thread during apply; the plan shows it unknown and runs nothing", async () => {
    const calls: string[] = [];
    const stack = await Stack.inline(
      "sdk-apply-later",
      (s) => {
        s.provider = provider();
        const members = ["user:ann@example.com"];
        const b = new RestorePlanIamBinding("later", { name: "nightly", role: "roles/gkebackup.admin", members });
        s.export(
          "tag",
          b.etag.apply((e) => {
            calls.push(e);
            return `tag:${e}`;
          }),
        );
      },
      { dir },
    );
    const plan = await stack.plan();
    expect(plan.output_changes.tag).toMatchObject({ after_unknown: true });
    expect(calls).toEqual([]);
    const result = await stack.apply(plan);
    const etag = result.state.resources.find((r) => r.address === "later")!.outputs.etag as string;
    expect(calls).toEqual([etag]);
    expect(result.state.outputs.tag).toBe(`tag:${etag}`);
    await stack.destroy();
  });
});
