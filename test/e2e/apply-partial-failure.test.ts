// Issue 4, acceptance 5: one resource points at a restore plan that does not exist. Every other
// resource is applied and recorded, only the one that depends on the failed one is skipped, the
// error names the address, the object and NOT_FOUND, exit 1. Fixing the stack converges.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, runCli, type CliResult, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, ep, memberYaml, membersOf, readStateFile, rp, stackHead } from "./apply-helpers.js";

const MISSING = rp("does-not-exist");

const stack = (brokenTarget: string) =>
  stackHead("partial") +
  bindingYaml("viewersA", "plan-a", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  bindingYaml("adminsA", "plan-a", "roles/gkebackup.admin", ["user:oncall@example.com"]) +
  bindingYaml("broken", brokenTarget, "roles/gkebackup.viewer", ["user:bob@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "user:carol@example.com") +
  memberYaml("afterBroken", "churn", "roles/aiplatform.viewer", "user:dave@example.com", "    options:\n      dependsOn: [broken]\n") +
  bindingYaml("viewersB", "plan-b", "roles/gkebackup.viewer", ["user:erin@example.com"]);

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    { name: rp("plan-a"), policy: { bindings: [] } },
    { name: rp("plan-b"), policy: { bindings: [] } },
    { name: rp("plan-c"), policy: { bindings: [{ role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] }] } },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-partial-");
let stackFile: string;
let statePath: string;
let first: CliResult;

beforeAll(async () => {
  stackFile = join(ws.dir, "stack.yaml");
  statePath = join(ws.dir, "state.json");
  await writeFile(stackFile, stack(MISSING));
  first = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
});

describe("a resource on a missing restore plan", () => {
  it("exits 1 and the error names the address, the restore plan and NOT_FOUND", () => {
    expectExit(first, 1);
    const err = first.stderr;
    expect(err).toMatch(/broken/);
    expect(err).toContain(MISSING);
    expect(err).toContain("NOT_FOUND");
    // The one error line that carries the address also names the object.
    expect(err.split("\n").some((l) => l.includes("broken") && l.includes(MISSING))).toBe(true);
  });

  it("every other resource is applied and in the state; only the dependent is skipped", async () => {
    const s = await readStateFile(statePath);
    expect(s.resources.map((r) => r.address).sort()).toEqual(["adminsA", "invoker", "viewersA", "viewersB"]);
    expect(first.stderr).toMatch(/afterBroken/); // reported as skipped
    expect(membersOf(await livePolicy(ws.emu, rp("plan-a")), "roles/gkebackup.viewer")).toEqual(["user:alice@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, rp("plan-a")), "roles/gkebackup.admin")).toEqual(["user:oncall@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, rp("plan-b")), "roles/gkebackup.viewer")).toEqual(["user:erin@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.user")).toEqual(["user:carol@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.viewer")).toEqual([]);
  });

  it("after the stack is fixed, apply converges and the next plan shows no changes", async () => {
    await writeFile(stackFile, stack("plan-c"));
    const fixed = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    expectExit(fixed, 0);
    expect(fixed.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    const plan = await runCli(["plan", "--detailed-exitcode", "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    expectExit(plan, 0);
    expect(plan.stdout).toContain("No changes.");
    const c = await livePolicy(ws.emu, rp("plan-c"));
    expect(membersOf(c, "roles/gkebackup.viewer")).toEqual(["user:bob@example.com"]);
    expect(membersOf(c, "roles/gkebackup.backupAdmin")).toEqual(["group:platform@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.viewer")).toEqual(["user:dave@example.com"]);
    expect((await readStateFile(statePath)).resources).toHaveLength(6);
  });
});
