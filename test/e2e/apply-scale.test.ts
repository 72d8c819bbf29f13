// Issue 4, acceptance 4: 500 resources over 50 policies (25 restore plans × 10 binding roles,
// 25 endpoints × 10 member resources) apply with exactly one getIamPolicy and one setIamPolicy
// per policy for the whole `apply` command (its refresh included), and the next plan is clean.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import {
  bindingYaml,
  count,
  ep,
  M,
  memberYaml,
  membersOf,
  policyIn,
  readStateFile,
  rp,
  stackHead,
} from "./apply-helpers.js";

const PLANS = 25;
const PER = 10;
const rpId = (i: number) => `rp-${String(i).padStart(2, "0")}`;
const epId = (i: number) => `ep-${String(i).padStart(2, "0")}`;
const bindingRole = (j: number) => `roles/gkebackup.custom${j}`;
// Two roles per endpoint so merged member additions share bindings and create new ones.
const memberRole = (j: number) => (j % 2 === 0 ? "roles/aiplatform.user" : "roles/aiplatform.viewer");
const memberOf = (i: number, j: number) => `serviceAccount:sa-${i}-${j}@my-project.iam.gserviceaccount.com`;

function bigStack(): string {
  let s = stackHead("scale");
  for (let i = 0; i < PLANS; i++) {
    for (let j = 0; j < PER; j++)
      s += bindingYaml(`b${i}x${j}`, rp(rpId(i)), bindingRole(j), [
        `user:u${i}-${j}@example.com`,
        `group:g${j}@example.com`,
      ]);
  }
  for (let i = 0; i < PLANS; i++) {
    for (let j = 0; j < PER; j++) s += memberYaml(`m${i}x${j}`, ep(epId(i)), memberRole(j), memberOf(i, j));
  }
  return s;
}

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: Array.from({ length: PLANS }, (_, i) => ({ name: rp(rpId(i)), policy: { bindings: [] } })),
  endpoints: Array.from({ length: PLANS }, (_, i) => ({ name: ep(epId(i)), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-scale-");
let stackFile: string;
let statePath: string;

beforeAll(async () => {
  stackFile = join(ws.dir, "stack.yaml");
  statePath = join(ws.dir, "state.json");
  await writeFile(stackFile, bigStack());
});

describe("500 resources over 50 policies", () => {
  it("apply --auto-approve makes exactly 50 getIamPolicy and 50 setIamPolicy calls", async () => {
    await resetStats(ws.emu);
    const r = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
      timeoutMs: 60_000,
    });
    expectExit(r, 0);
    expect(r.stdout).toContain("Apply complete! Resources: 500 added, 0 changed, 0 destroyed.");
    const s = await stats(ws.emu);
    expect({
      rpGet: count(s, M.rpGet),
      rpSet: count(s, M.rpSet),
      epGet: count(s, M.epGet),
      epSet: count(s, M.epSet),
      fedGet: count(s, M.fedGet),
    }).toEqual({ rpGet: 25, rpSet: 25, epGet: 25, epSet: 25, fedGet: 0 });
    expect(Object.values(s.requests).reduce((a, b) => a + b, 0)).toBe(100);

    const w = await world(ws.emu);
    for (let i = 0; i < PLANS; i++) {
      const p = policyIn(w, rp(rpId(i)));
      expect(p?.bindings).toHaveLength(PER);
      for (let j = 0; j < PER; j++)
        expect(membersOf(p, bindingRole(j))).toEqual([`group:g${j}@example.com`, `user:u${i}-${j}@example.com`]);
      const e = policyIn(w, ep(epId(i)));
      expect(membersOf(e, "roles/aiplatform.user")).toEqual([0, 2, 4, 6, 8].map((j) => memberOf(i, j)).sort());
      expect(membersOf(e, "roles/aiplatform.viewer")).toEqual([1, 3, 5, 7, 9].map((j) => memberOf(i, j)).sort());
    }
    expect((await readStateFile(statePath)).resources).toHaveLength(500);
  });

  it("a following plan shows no changes", async () => {
    await resetStats(ws.emu);
    const r = await runCli(["plan", "--detailed-exitcode", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
      timeoutMs: 60_000,
    });
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
    const s = await stats(ws.emu);
    expect(count(s, M.rpGet) + count(s, M.epGet)).toBe(50); // one read per policy, never per resource
    expect(count(s, M.rpSet) + count(s, M.epSet)).toBe(0);
  });
});
