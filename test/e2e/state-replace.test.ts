// `plan --replace ADDR` / `apply --replace ADDR` on unchanged, imported grants (SPEC sections 1
// and 5): shown as "+/-" create-before-destroy, applied without ever leaving the members out of
// the policy, and the next plan is clean. Built CLI against a seeded emulator.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { BINDING, EP, LOCATION as LOC, MEMBER, PROJECT, RP } from "../fixtures/builders.js";
import { SET_EP, SET_RP } from "../support/emulator.js";
import { expectExit, livePolicy, resetStats, runCli, stats, useEmulatorWorkspace } from "./helpers.js";

const VIEWERS = ["group:sre@example.com", "user:carol@example.com"];

const SEED: EmulatorWorld = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [
    {
      name: RP,
      policy: {
        bindings: [
          { role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] },
          { role: "roles/gkebackup.admin", members: ["user:root@example.com"] },
        ],
      },
    },
  ],
  endpoints: [
    {
      name: EP,
      policy: {
        bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com", "group:ml@example.com"] }],
      },
    },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-replace-");

const cli = (args: string[]) => runCli(args, { emulator: ws.emu, cwd: ws.dir });
const sorted = (xs: string[] | undefined) => [...(xs ?? [])].sort();

// A generous timeout: every step is a fresh CLI process (about a second each on a busy machine).
describe("--replace on unchanged grants", { timeout: 90_000 }, () => {
  it("plans +/- replacement by request, applies with no gap in access, and the next plan is clean", async () => {
    const stack = join(ws.dir, "stack.yaml");
    await writeFile(
      stack,
      stringify({
        name: "team",
        provider: { project: PROJECT, location: LOC },
        resources: {
          viewers: { type: BINDING, properties: { name: "nightly", role: "roles/gkebackup.viewer", members: VIEWERS } },
          dana: {
            type: MEMBER,
            properties: { name: "churn", role: "roles/aiplatform.user", member: "user:dana@example.com" },
          },
        },
      }),
    );
    const state = join(ws.dir, "team.json");
    expectExit(await cli(["import", "viewers", "nightly roles/gkebackup.viewer", "-f", stack, "--state", state]), 0);
    expectExit(
      await cli(["import", "dana", "churn roles/aiplatform.user user:dana@example.com", "-f", stack, "--state", state]),
      0,
    );

    await resetStats(ws.emu);
    const plan = await cli([
      "plan",
      "--detailed-exitcode",
      "--replace",
      "viewers",
      "--replace",
      "dana",
      "-f",
      stack,
      "--state",
      state,
    ]);
    expectExit(plan, 2);
    for (const [address, type] of [
      ["viewers", BINDING],
      ["dana", MEMBER],
    ] as const) {
      expect(plan.stdout).toContain(
        `  # ${address} must be replaced\n  # (replacement requested with ` +
          `--replace)\n+/- resource "${type}" "${address}" {`,
      );
    }
    expect(plan.stdout).toContain("+/- create replacement and then destroy");
    expect(plan.stdout).toContain("Plan: 0 to import, 2 to add, 0 to change, 2 to destroy.");
    expect((await stats(ws.emu)).requests[SET_RP]).toBe(0);

    const apply = await cli([
      "apply",
      "--auto-approve",
      "--replace",
      "viewers",
      "--replace",
      "dana",
      "-f",
      stack,
      "--state",
      state,
    ]);
    expectExit(apply, 0);
    expect(apply.stdout).toMatch(/2 added, 0 changed, 2 destroyed/);
    // Changes to one policy are one read-modify-write, so the members are never out of it.
    const st = await stats(ws.emu);
    expect(st.requests[SET_RP]).toBeLessThanOrEqual(1);
    expect(st.requests[SET_EP]).toBeLessThanOrEqual(1);
    const rp = await livePolicy(ws.emu, RP);
    expect(sorted(rp.bindings?.find((b) => b.role === "roles/gkebackup.viewer" && !b.condition)?.members)).toEqual(
      VIEWERS,
    );
    expect(sorted(rp.bindings?.find((b) => b.role === "roles/gkebackup.admin")?.members)).toEqual([
      "user:root@example.com",
    ]);
    const ep = await livePolicy(ws.emu, EP);
    expect(sorted(ep.bindings?.find((b) => b.role === "roles/aiplatform.user")?.members)).toEqual([
      "group:ml@example.com",
      "user:dana@example.com",
    ]);

    const s = JSON.parse(await readFile(state, "utf8")) as State;
    expect(s.resources.map((r) => r.address).sort()).toEqual(["dana", "viewers"]);
    expect(s.resources.find((r) => r.address === "viewers")!.outputs.etag).toBe(rp.etag);

    const again = await cli(["plan", "--detailed-exitcode", "-f", stack, "--state", state]);
    expectExit(again, 0);
    expect(again.stdout).toContain("No changes.");
  });
});
