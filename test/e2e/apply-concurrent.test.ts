// Issue 4, acceptance 6: while an apply of many resources runs (emulator latency), another client
// keeps read-modify-writing OTHER roles on the same policies (raw REST with etags, retrying on
// 409). None of that client's grants are lost and the apply succeeds.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import {
  addMember,
  bindingYaml,
  clearFaults,
  ep,
  M,
  memberYaml,
  membersOf,
  policyIn,
  rawReadModifyWrite,
  responses,
  rp,
  setFaults,
  stackHead,
} from "./apply-helpers.js";

const N = 10; // restore plans and endpoints each
const ROLES = 4; // resources per policy
const names = [
  ...Array.from({ length: N }, (_, i) => rp(`busy-${i}`)),
  ...Array.from({ length: N }, (_, i) => ep(`busy-${i}`)),
];

function stack(): string {
  let s = stackHead("concurrent");
  for (let i = 0; i < N; i++)
    for (let j = 0; j < ROLES; j++)
      s += bindingYaml(`b${i}x${j}`, rp(`busy-${i}`), `roles/gkebackup.r${j}`, [`user:b${i}-${j}@example.com`]);
  for (let i = 0; i < N; i++)
    for (let j = 0; j < ROLES; j++)
      s += memberYaml(`m${i}x${j}`, ep(`busy-${i}`), "roles/aiplatform.user", `user:m${i}-${j}@example.com`);
  return s;
}

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: Array.from({ length: N }, (_, i) => ({ name: rp(`busy-${i}`), policy: { bindings: [] } })),
  endpoints: Array.from({ length: N }, (_, i) => ({ name: ep(`busy-${i}`), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-concurrent-");

describe("apply while another client edits the same policies", () => {
  it("keeps every grant of the other client and succeeds", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "state.json");
    await writeFile(stackFile, stack());
    await setFaults(ws.emu, { latencyMs: 30, seed: 7 });
    await resetStats(ws.emu);

    // The other client: two workers cycling over all 20 policies, each adding a new member to
    // its own role (never one the stack owns), retrying on 409 until the write lands.
    const granted: { policy: string; role: string; member: string }[] = [];
    let clientAborts = 0;
    let stop = false;
    let applyDone = false;
    const worker = async (w: number) => {
      for (let k = 0; !stop; k++) {
        const policy = names[(k * 2 + w) % names.length]!;
        const role = `roles/other.client${w}`;
        const member = `user:c${w}-${k}@example.com`;
        for (;;) {
          if (await rawReadModifyWrite(ws.emu, policy, (p) => addMember(p, role, member))) break;
          clientAborts++;
        }
        granted.push({ policy, role, member });
        // Keep going until the apply has finished and every policy was touched at least once.
        if (applyDone && granted.length >= names.length) stop = true;
      }
    };
    const client = Promise.all([worker(0), worker(1)]);
    let r;
    try {
      r = await runCli(["apply", "--auto-approve", "--parallelism", "2", "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
        timeoutMs: 60_000,
      });
    } finally {
      applyDone = true;
      await client;
      await clearFaults(ws.emu);
    }
    expectExit(r, 0);
    expect(r.stdout).toContain(`Apply complete! Resources: ${2 * N * ROLES} added, 0 changed, 0 destroyed.`);

    const w = await world(ws.emu);
    const lost = granted.filter((g) => !membersOf(policyIn(w, g.policy), g.role).includes(g.member));
    expect(lost).toEqual([]);
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < ROLES; j++)
        expect(membersOf(policyIn(w, rp(`busy-${i}`)), `roles/gkebackup.r${j}`)).toEqual([
          `user:b${i}-${j}@example.com`,
        ]);
      expect(membersOf(policyIn(w, ep(`busy-${i}`)), "roles/aiplatform.user")).toEqual(
        Array.from({ length: ROLES }, (_, j) => `user:m${i}-${j}@example.com`).sort(),
      );
    }
    // The two writers really did collide: some setIamPolicy calls were rejected with 409 ABORTED
    // (the client's own 409s are counted above; the rest were converge's, which it retried).
    const s = await stats(ws.emu);
    const aborted = responses(s, M.rpSet, "ABORTED") + responses(s, M.epSet, "ABORTED");
    expect(granted.length).toBeGreaterThan(names.length - 1);
    // converge wrote with the etags its refresh read, which the client had made stale: it had to
    // re-read and re-apply (and still lost nothing).
    expect(
      aborted - clientAborts,
      `client grants ${granted.length}, client 409s ${clientAborts}, all 409s ${aborted}`,
    ).toBeGreaterThan(0);
  });
});
