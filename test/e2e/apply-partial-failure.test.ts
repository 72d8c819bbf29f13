// Issue 4, acceptance 5: one resource's write is refused at apply time (its caller may read the
// restore plan's policy but not set it, so the plan cannot know). Every other resource is applied
// and recorded, only the one that depends on the failed one is skipped, the error names the
// address, the object and PERMISSION_DENIED, exit 1. Fixing the stack converges. (A resource on an
// object that does not exist fails at plan time instead: test/e2e/plan-fails-early.test.ts.)
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, runCli, type CliResult, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, ep, memberYaml, membersOf, readStateFile, rp, stackHead } from "./apply-helpers.js";

const LOCKED = "projects/locked-project/locations/us-central1/restorePlans/audit";

const stack = (brokenTarget: string) =>
  stackHead("partial") +
  bindingYaml("viewersA", "plan-a", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  bindingYaml("adminsA", "plan-a", "roles/gkebackup.admin", ["user:oncall@example.com"]) +
  bindingYaml("broken", brokenTarget, "roles/gkebackup.viewer", ["user:bob@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "user:carol@example.com") +
  memberYaml(
    "afterBroken",
    "churn",
    "roles/aiplatform.viewer",
    "user:dave@example.com",
    "    options:\n      dependsOn: [broken]\n",
  ) +
  bindingYaml("viewersB", "plan-b", "roles/gkebackup.viewer", ["user:erin@example.com"]);

const SEED: EmulatorWorld = {
  projects: {
    "my-project": { number: "123456789012" },
    // converge's token may read policies here, not set them.
    "locked-project": {
      number: "210987654321",
      callers: { "ci-token": "user:ci@example.com" },
      iamAdmins: ["user:admin@example.com"],
      iamViewers: ["user:ci@example.com"],
    },
  },
  restorePlans: [
    { name: rp("plan-a"), policy: { bindings: [] } },
    { name: rp("plan-b"), policy: { bindings: [] } },
    {
      name: rp("plan-c"),
      policy: { bindings: [{ role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] }] },
    },
    { name: LOCKED, policy: { bindings: [] } },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-partial-");
let stackFile: string;
let statePath: string;
let first: CliResult;
const TOKEN = { CLOUDNATIVE_ACCESS_TOKEN: "ci-token" };

beforeAll(async () => {
  stackFile = join(ws.dir, "stack.yaml");
  statePath = join(ws.dir, "state.json");
  await writeFile(stackFile, stack(LOCKED));
  first = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
    cwd: ws.dir,
    emulator: ws.emu,
    env: TOKEN,
  });
});

describe("a resource whose write is refused at apply time", () => {
  it("exits 1 and the error names the address, the restore plan and PERMISSION_DENIED", () => {
    expectExit(first, 1);
    const err = first.stderr;
    expect(err).toMatch(/broken/);
    expect(err).toContain(LOCKED);
    expect(err).toContain("PERMISSION_DENIED");
    // The one error line that carries the address also names the object.
    expect(err.split("\n").some((l) => l.includes("broken") && l.includes(LOCKED))).toBe(true);
  });

  it("every other resource is applied and in the state; only the dependent is skipped", async () => {
    const s = await readStateFile(statePath);
    expect(s.resources.map((r) => r.address).sort()).toEqual(["adminsA", "invoker", "viewersA", "viewersB"]);
    expect(first.stderr).toMatch(/afterBroken/); // reported as skipped
    expect(membersOf(await livePolicy(ws.emu, rp("plan-a")), "roles/gkebackup.viewer")).toEqual([
      "user:alice@example.com",
    ]);
    expect(membersOf(await livePolicy(ws.emu, rp("plan-a")), "roles/gkebackup.admin")).toEqual([
      "user:oncall@example.com",
    ]);
    expect(membersOf(await livePolicy(ws.emu, rp("plan-b")), "roles/gkebackup.viewer")).toEqual([
      "user:erin@example.com",
    ]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.user")).toEqual([
      "user:carol@example.com",
    ]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.viewer")).toEqual([]);
  });

  it("after the stack is fixed, apply converges and the next plan shows no changes", async () => {
    await writeFile(stackFile, stack("plan-c"));
    const fixed = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: TOKEN,
    });
    expectExit(fixed, 0);
    expect(fixed.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    const plan = await runCli(["plan", "--detailed-exitcode", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: TOKEN,
    });
    expectExit(plan, 0);
    expect(plan.stdout).toContain("No changes.");
    const c = await livePolicy(ws.emu, rp("plan-c"));
    expect(membersOf(c, "roles/gkebackup.viewer")).toEqual(["user:bob@example.com"]);
    expect(membersOf(c, "roles/gkebackup.backupAdmin")).toEqual(["group:platform@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.viewer")).toEqual([
      "user:dave@example.com",
    ]);
    expect((await readStateFile(statePath)).resources).toHaveLength(6);
  });
});
