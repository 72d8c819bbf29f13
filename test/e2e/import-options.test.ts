// `options.import` in the stack (SPEC section 6): the plan shows "= import", and apply adopts
// without writing to the cloud when live matches; a mismatch plans "imported and updated
// in-place" and apply writes that one policy once. Built CLI against a seeded emulator.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { BINDING, LOCATION as LOC, MEMBER, PROJECT } from "../fixtures/builders.js";
import { SET_EP, SET_RP } from "../support/emulator.js";
import { expectExit, livePolicy, resetStats, runCli, stats, useEmulatorWorkspace } from "./helpers.js";

const NIGHTLY = `projects/${PROJECT}/locations/${LOC}/restorePlans/nightly`;
const WEEKLY = `projects/${PROJECT}/locations/${LOC}/restorePlans/weekly`;
const CHURN = `projects/${PROJECT}/locations/${LOC}/endpoints/churn`;
const SCORER = `projects/${PROJECT}/locations/${LOC}/endpoints/scorer`;

const SEED: EmulatorWorld = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [
    {
      name: NIGHTLY,
      policy: {
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] }],
      },
    },
    {
      name: WEEKLY,
      policy: {
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] }],
      },
    },
  ],
  endpoints: [
    {
      name: CHURN,
      policy: {
        bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com", "group:ml@example.com"] }],
      },
    },
    {
      name: SCORER,
      policy: {
        bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com", "group:ml@example.com"] }],
      },
    },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-import-options-");

async function writeStack(file: string, plan: string, endpoint: string, members: string[]): Promise<string> {
  const path = join(ws.dir, file);
  const stack = {
    name: "adopt",
    provider: { project: PROJECT, location: LOC },
    resources: {
      viewers: {
        type: BINDING,
        properties: { name: plan, role: "roles/gkebackup.viewer", members },
        options: { import: `${plan} roles/gkebackup.viewer` },
      },
      dana: {
        type: MEMBER,
        properties: { name: endpoint, role: "roles/aiplatform.user", member: "user:dana@example.com" },
        options: { import: `${endpoint} roles/aiplatform.user user:dana@example.com` },
      },
    },
  };
  await writeFile(path, stringify(stack));
  return path;
}

const cli = (args: string[]) => runCli(args, { emulator: ws.emu, cwd: ws.dir });

// A generous timeout: every step is a fresh CLI process (about a second each on a busy machine).
describe("options.import", { timeout: 90_000 }, () => {
  it("plans as imports and applies with zero setIamPolicy calls when live matches", async () => {
    const stack = await writeStack("match.yaml", NIGHTLY, CHURN, ["user:carol@example.com", "group:sre@example.com"]);
    const state = join(ws.dir, "match.json");
    await resetStats(ws.emu);

    const plan = await cli(["plan", "--detailed-exitcode", "-f", stack, "--state", state]);
    expectExit(plan, 2);
    expect(plan.stdout).toContain("# viewers will be imported");
    expect(plan.stdout).toContain("# dana will be imported");
    expect(plan.stdout).toContain(`# (import ID "${NIGHTLY} roles/gkebackup.viewer")`);
    expect(plan.stdout).toMatch(/^ {2}= resource "cloudnative:backup\/v1:RestorePlanIamBinding" "viewers" \{$/m);
    expect(plan.stdout).toMatch(/^ {2}= resource "cloudnative:aiplatform\/v1beta1:EndpointIamMember" "dana" \{$/m);
    expect(plan.stdout).not.toContain("updated in-place");
    expect(plan.stdout).toContain("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy.");

    const apply = await cli(["apply", "--auto-approve", "-f", stack, "--state", state]);
    expectExit(apply, 0);
    expect(apply.stdout).toMatch(/2 imported, 0 added, 0 changed, 0 destroyed/);
    const st = await stats(ws.emu);
    expect(st.requests[SET_RP]).toBe(0);
    expect(st.requests[SET_EP]).toBe(0);

    const s = JSON.parse(await readFile(state, "utf8")) as State;
    expect(s.resources.map((r) => [r.address, r.id]).sort()).toEqual([
      ["dana", `${CHURN} roles/aiplatform.user user:dana@example.com`],
      ["viewers", `${NIGHTLY} roles/gkebackup.viewer`],
    ]);
    expect(s.resources.find((r) => r.address === "viewers")!.inputs).toEqual({
      name: NIGHTLY,
      role: "roles/gkebackup.viewer",
      members: ["group:sre@example.com", "user:carol@example.com"],
    });

    const again = await cli(["plan", "--detailed-exitcode", "-f", stack, "--state", state]);
    expectExit(again, 0);
    expect((await stats(ws.emu)).requests[SET_RP]).toBe(0);
  });

  it(
    "a mismatching binding plans as imported and updated in-place; " + "apply writes exactly once, to that policy",
    async () => {
      const stack = await writeStack("mismatch.yaml", WEEKLY, SCORER, [
        "user:carol@example.com",
        "user:zed@example.com",
      ]);
      const state = join(ws.dir, "mismatch.json");
      await resetStats(ws.emu);

      const plan = await cli(["plan", "--detailed-exitcode", "-f", stack, "--state", state]);
      expectExit(plan, 2);
      expect(plan.stdout).toContain("# viewers will be imported and updated in-place");
      expect(plan.stdout).toContain("# dana will be imported\n");
      expect(plan.stdout).toMatch(/^ +- "group:sre@example\.com",$/m);
      expect(plan.stdout).toMatch(/^ +\+ "user:zed@example\.com",$/m);
      expect(plan.stdout).toContain("Plan: 2 to import, 0 to add, 1 to change, 0 to destroy.");

      const apply = await cli(["apply", "--auto-approve", "-f", stack, "--state", state]);
      expectExit(apply, 0);
      const st = await stats(ws.emu);
      expect(st.requests[SET_RP]).toBe(1);
      expect(st.requests[SET_EP]).toBe(0);

      const weekly = (await livePolicy(ws.emu, WEEKLY)).bindings!;
      expect(weekly.map((b) => ({ ...b, members: [...b.members].sort() }))).toEqual([
        { role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "user:zed@example.com"] },
      ]);
      // The other policies are untouched.
      expect((await livePolicy(ws.emu, NIGHTLY)).bindings![0]!.members.sort()).toEqual([
        "group:sre@example.com",
        "user:carol@example.com",
      ]);
      expect((await livePolicy(ws.emu, SCORER)).bindings![0]!.members.sort()).toEqual([
        "group:ml@example.com",
        "user:dana@example.com",
      ]);

      const again = await cli(["plan", "--detailed-exitcode", "-f", stack, "--state", state]);
      expectExit(again, 0);
    },
  );
});
