// Issue 15, item 6: one setIamPolicy per changed policy even when a change on one policy depends
// on a change on another. The real CLI against the emulator over loopback; the emulator's stats
// count the writes per method.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import { M, bindingYaml, count, ep, memberYaml, membersOf, policyIn, rp, stackHead } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-one-write-");

// On the endpoint: `after` depends on the binding on the restore plan, `free` depends on nothing.
const STACK =
  stackHead("one-write") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:bob@example.com"]) +
  memberYaml(
    "after",
    "churn",
    "roles/aiplatform.user",
    "user:dana@example.com",
    "    options:\n      dependsOn: [viewers]\n",
  ) +
  memberYaml("free", "churn", "roles/aiplatform.viewer", "user:erin@example.com");

describe("one write per policy", () => {
  it("writes the endpoint once although one of its members waits for the restore plan's binding", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "state.json");
    const cli = (...args: string[]) =>
      runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    await writeFile(stackFile, STACK);
    await resetStats(ws.emu);
    const applied = await cli("apply", "--auto-approve");
    expectExit(applied, 0);
    expect(applied.stdout).toMatch(/Apply complete! Resources: 3 added, 0 changed, 0 destroyed\./);
    const s = await stats(ws.emu);
    expect(count(s, M.epSet)).toBe(1);
    expect(count(s, M.rpSet)).toBe(1);

    const w = await world(ws.emu);
    expect(membersOf(policyIn(w, ep("churn")), "roles/aiplatform.user")).toEqual(["user:dana@example.com"]);
    expect(membersOf(policyIn(w, ep("churn")), "roles/aiplatform.viewer")).toEqual(["user:erin@example.com"]);
    expect(membersOf(policyIn(w, rp("nightly")), "roles/gkebackup.viewer")).toEqual(["user:bob@example.com"]);

    const again = await cli("plan", "--detailed-exitcode");
    expectExit(again, 0);
    expect(again.stdout).toMatch(/No changes\./);
  });
});
