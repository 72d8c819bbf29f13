// An apply killed (SIGKILL) while it writes 20 grants at 300 ms a write: the grants it wrote are
// converge's own, whatever the state had saved by then. Each write's intent was recorded before
// it was sent; `state show` says a write is pending, the next plan settles them (and says so),
// adopts nothing, and the next apply converges; destroy then leaves every policy as it was.
import { writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, startCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import {
  clearFaults,
  getCalls,
  membersOf,
  policyIn,
  readStateFile,
  rp,
  setFaults,
  stackHead,
  untilQuiet,
} from "./apply-helpers.js";

const ADMIN = "roles/gkebackup.admin";
const FOREIGN = "user:foreign@example.com";
const N = 20;
const ZOE = "user:zoe@example.com";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: Array.from({ length: N }, (_, i) => ({
    name: rp(`p${i}`),
    policy: { bindings: [{ role: ADMIN, members: [FOREIGN] }] },
  })),
};

const memberYaml = (i: number) =>
  `  m${i}:\n    type: cloudnative:backup/v1:RestorePlanIamMember\n    properties:\n      ` +
  `name: p${i}\n      role: ${ADMIN}\n      member: ${ZOE}\n`;
const stack = stackHead("crashed") + Array.from({ length: N }, (_, i) => memberYaml(i)).join("");

/** Applies `stackFile` at 300 ms a write and SIGKILLs it once 6 writes are done (4 more in
 *  flight); resolves once those have landed in the emulator too, as Google's do. */
async function crashedApply(stackFile: string, statePath: string): Promise<void> {
  await setFaults(ws.emu, { latencyMs: 300 });
  const run = startCli(
    ["apply", "--auto-approve", "--json", "--parallelism", "4", "-f", stackFile, "--state", statePath],
    { cwd: ws.dir, emulator: ws.emu },
  );
  const done = () => run.output().split('"type":"apply_complete"').length - 1;
  while (done() < 6) await new Promise((r) => run.child.stdout!.once("data", r));
  run.child.kill("SIGKILL");
  expect((await run.done).signal).toBe("SIGKILL");
  await untilQuiet(ws.emu);
  await clearFaults(ws.emu);
}

/** The indexes of the objects on which ZOE is granted now. */
async function grantedOn(): Promise<number[]> {
  return (await world(ws.emu))
    .restorePlans!.filter((o) => membersOf(o.policy, ADMIN).includes(ZOE))
    .map((o) => Number(o.name.split("/p").at(-1)))
    .sort((a, b) => a - b);
}

const ws = useEmulatorWorkspace(SEED, "converge-crash-ownership-");

describe("an apply killed while it writes", () => {
  it("leaves its grants converge's own: settled by the next plan, revoked by destroy", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "crashed.json");
    await writeFile(stackFile, stack);
    const cli = (...args: string[]) =>
      runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    const granted = async () =>
      (await world(ws.emu)).restorePlans!.filter((o) => membersOf(o.policy, ADMIN).includes(ZOE)).length;

    await crashedApply(stackFile, statePath);

    const live = await granted();
    const saved = existsSync(statePath) ? (await readStateFile(statePath)).resources.length : 0;
    expect(live).toBeGreaterThanOrEqual(6);
    expect(existsSync(`${statePath}.intents`)).toBe(true);
    // `state show` of a grant written but not saved says its write is pending.
    const savedAddresses = existsSync(statePath)
      ? (await readStateFile(statePath)).resources.map((r) => r.address)
      : [];
    const unsaved = (await world(ws.emu))
      .restorePlans!.map((o) => ({ o, address: `m${o.name.split("/p").at(-1)}` }))
      .find(({ o, address }) => membersOf(o.policy, ADMIN).includes(ZOE) && !savedAddresses.includes(address));
    if (unsaved && savedAddresses.length) {
      const shown = await cli("state", "show", unsaved.address);
      expect(shown.stderr).toMatch(/write of an interrupted run on it pending: the next plan or apply settles it/);
    }

    await resetStats(ws.emu);
    const planned = await cli("plan");
    expectExit(planned, 0);
    // One read per policy: the plan starts from the copies the settlement read (a write of the
    // killed run landing between two reads would otherwise look like someone else's grant).
    expect(getCalls(await stats(ws.emu))).toBe(N);
    expect(planned.stdout + planned.stderr).not.toContain("granted outside converge");
    if (live > saved)
      expect(planned.stdout + planned.stderr).toMatch(
        /Settled \d+ writes? an interrupted run left pending: \d+ landed/,
      );
    expect(planned.stdout).toContain(`Plan: 0 to import, ${N - live} to add`);

    const applied = await cli("apply", "--auto-approve");
    expectExit(applied, 0);
    const state = await readStateFile(statePath);
    expect(state.resources).toHaveLength(N);
    expect(state.resources.filter((r) => r.adopted)).toEqual([]);
    expect(existsSync(`${statePath}.intents`)).toBe(false);
    expectExit(await cli("plan", "--detailed-exitcode"), 0);
    if (unsaved)
      expect((await cli("state", "show", unsaved.address)).stdout).toMatch(
        /from a write of an interrupted run that landed/,
      );

    expectExit(await cli("destroy", "--auto-approve"), 0);
    const after = await world(ws.emu);
    for (let i = 0; i < N; i++) expect(membersOf(policyIn(after, rp(`p${i}`)), ADMIN)).toEqual([FOREIGN]);
  });

  it("an apply with nothing left to change still records what the settlement found", async () => {
    const stackFile = join(ws.dir, "nothing-left.yaml");
    const statePath = join(ws.dir, "nothing-left.json");
    await writeFile(stackFile, stack);
    const cli = (...args: string[]) =>
      runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    await crashedApply(stackFile, statePath);
    // The stack now declares exactly the grants the killed apply made: nothing is left to change.
    const live = await grantedOn();
    await writeFile(stackFile, stackHead("crashed") + live.map(memberYaml).join(""));
    const applied = await cli("apply", "--auto-approve");
    expectExit(applied, 0);
    expect(applied.stdout).toContain("No changes.");
    const state = await readStateFile(statePath);
    expect(state.resources.map((r) => r.address).sort()).toEqual(live.map((i) => `m${i}`).sort());
    expect(state.resources.filter((r) => r.adopted)).toEqual([]);
    expect(existsSync(`${statePath}.intents`)).toBe(false);
    expectExit(await cli("destroy", "--auto-approve"), 0);
    expect(await grantedOn()).toEqual([]);
  });
});
