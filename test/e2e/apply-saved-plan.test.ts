// Issue 4, acceptance 3: a saved plan (`plan --out F`) is refused once the state it was made
// from has changed (another apply in between, or `refresh` bumping the serial): exit 1, "stale",
// no setIamPolicy, state file byte-for-byte unchanged. A fresh saved plan applies without asking.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, resetStats, runCli, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, ep, memberYaml, membersOf, readStateFile, rp, setCalls, stackHead } from "./apply-helpers.js";

const BASE =
  stackHead("saved") + bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]);
const MORE = BASE + memberYaml("invoker", "churn", "roles/aiplatform.user", "user:bob@example.com");
const EVEN_MORE = MORE + bindingYaml("admins", "nightly", "roles/gkebackup.admin", ["user:oncall@example.com"]);

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-saved-");
let stackFile: string;
let statePath: string;
const cli = (...args: string[]) =>
  runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });

beforeAll(() => {
  stackFile = join(ws.dir, "stack.yaml");
  statePath = join(ws.dir, "state", "saved.json"); // state/ is not made here: apply creates it
});

async function expectRefusedAsStale(planFile: string) {
  const before = await readFile(statePath);
  await resetStats(ws.emu);
  const r = await runCli(["apply", planFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
  expectExit(r, 1);
  expect(r.stderr).toMatch(/stale/);
  const s = await stats(ws.emu);
  expect(setCalls(s)).toBe(0);
  expect(totalRequests(s)).toBe(0); // refused before touching the cloud at all
  expect((await readFile(statePath)).equals(before)).toBe(true);
}

describe("saved plans", () => {
  it("a plan saved before another apply created the state is stale", async () => {
    await writeFile(stackFile, BASE);
    const early = join(ws.dir, "early.plan.json");
    expectExit(await cli("plan", "--out", early), 0);
    expect(existsSync(statePath)).toBe(false);
    // Something else applies in between.
    const applied = await cli("apply", "--auto-approve");
    expectExit(applied, 0);
    await expectRefusedAsStale(early);
  });

  it("a plan saved before `refresh` (which bumps the serial) is stale", async () => {
    await writeFile(stackFile, MORE);
    const planFile = join(ws.dir, "more.plan.json");
    expectExit(await cli("plan", "--out", planFile), 0);
    const serialBefore = (await readStateFile(statePath)).serial;
    expectExit(await cli("refresh"), 0);
    expect((await readStateFile(statePath)).serial).toBe(serialBefore + 1);
    await expectRefusedAsStale(planFile);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.user")).toEqual([]);
  });

  it("a fresh saved plan applies without asking (no terminal needed) and exactly as planned", async () => {
    await writeFile(stackFile, EVEN_MORE);
    const planFile = join(ws.dir, "fresh.plan.json");
    const planned = await cli("plan", "--out", planFile);
    expectExit(planned, 0);
    expect(planned.stdout).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
    await resetStats(ws.emu);
    // No -f: the stack is stack.yaml in the working directory, as for plan; stdin is not a terminal.
    const r = await runCli(["apply", planFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    expectExit(r, 0);
    expect(r.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    expect(setCalls(await stats(ws.emu))).toBe(2);
    expect((await readStateFile(statePath)).resources.map((x) => x.address).sort()).toEqual([
      "admins",
      "invoker",
      "viewers",
    ]);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.user")).toEqual(["user:bob@example.com"]);
    expect(membersOf(await livePolicy(ws.emu, rp("nightly")), "roles/gkebackup.admin")).toEqual([
      "user:oncall@example.com",
    ]);
    // Applying the same plan again is now stale too: its serial was consumed.
    await expectRefusedAsStale(planFile);
  });
});
