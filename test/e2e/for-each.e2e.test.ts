// Issue 18, repetition: `options.forEach` over a map of 20 teams applies 20 instances in one write
// per policy; removing a team destroys exactly that instance; instances are addressed
// `name["key"]` in the state, in plan JSON (Terraform's `index`), with --target, import and state mv.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import { MEMBER_T, ep, membersOf, policyIn, setCalls } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [
    {
      name: ep("churn"),
      policy: { bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com"] }] },
    },
  ],
};

const TEAMS = Object.fromEntries(
  Array.from({ length: 20 }, (_, i) => [`team${String(i).padStart(2, "0")}`, `team${i}@example.com`]),
);

const STACK = `name: teams
provider:
  project: my-project
  location: us-central1
config:
  teams:
    type: map
resources:
  viewers:
    type: ${MEMBER_T}
    options:
      forEach: \${teams}
    properties:
      name: churn
      role: roles/aiplatform.viewer
      member: group:\${each.value}
`;

const ws = useEmulatorWorkspace(SEED, "converge-for-each-");

describe("forEach", () => {
  it("applies one instance per team in one write, and removing a team destroys exactly its instance", async () => {
    const stack = join(ws.dir, "stack.yaml");
    const state = join(ws.dir, "teams.json");
    await writeFile(stack, STACK);
    await writeFile(join(ws.dir, "all.json"), JSON.stringify({ teams: TEAMS }));
    const cli = (args: string[]) => runCli([...args, "-f", stack, "--state", state], { cwd: ws.dir, emulator: ws.emu });
    await resetStats(ws.emu);
    expectExit(await cli(["apply", "--auto-approve", "--var-file", "all.json"]), 0);
    expect(setCalls(await stats(ws.emu))).toBe(1);
    expect(membersOf(policyIn(await world(ws.emu), ep("churn")), "roles/aiplatform.viewer")).toEqual(
      Object.values(TEAMS)
        .map((e) => `group:${e}`)
        .sort(),
    );
    const saved = JSON.parse(await readFile(state, "utf8")) as State;
    expect(saved.resources.map((r) => r.address)).toContain('viewers["team07"]');

    const fewer = { ...TEAMS };
    delete fewer.team07;
    await writeFile(join(ws.dir, "fewer.json"), JSON.stringify({ teams: fewer }));
    const planned = await cli(["plan", "--var-file", "fewer.json", "--json"]);
    expectExit(planned, 0);
    const changes = (
      JSON.parse(planned.stdout) as {
        resource_changes: { address: string; name: string; index?: string; change: { actions: string[] } }[];
      }
    ).resource_changes;
    const changed = changes.filter((c) => c.change.actions[0] !== "no-op");
    expect(changed).toEqual([
      expect.objectContaining({
        address: 'viewers["team07"]',
        name: "viewers",
        index: "team07",
        change: expect.objectContaining({ actions: ["delete"] }),
      }),
    ]);
    await resetStats(ws.emu);
    expectExit(await cli(["apply", "--auto-approve", "--var-file", "fewer.json"]), 0);
    expect(setCalls(await stats(ws.emu))).toBe(1);
    const after = membersOf(policyIn(await world(ws.emu), ep("churn")), "roles/aiplatform.viewer");
    expect(after).toHaveLength(19);
    expect(after).not.toContain("group:team7@example.com");
  });

  it("targets, imports and moves instances by their address", async () => {
    const stack = join(ws.dir, "stack.yaml");
    const state = join(ws.dir, "two.json");
    await writeFile(stack, STACK);
    const teams = ["--var", 'teams={"team00":"team0@example.com","data":"data@example.com"}'];
    const cli = (args: string[]) =>
      runCli([...args, "-f", stack, "--state", state, ...teams], { cwd: ws.dir, emulator: ws.emu });
    const targeted = await cli(["plan", "--target", 'viewers["data"]']);
    expectExit(targeted, 0);
    expect(targeted.stdout).toContain('# viewers["data"] will be created');
    expect(targeted.stdout).not.toContain('viewers["team00"]');
    // team00's grant exists already (the first test made it): import it under its instance address.
    const imported = await cli([
      "import",
      'viewers["team00"]',
      `${ep("churn")} roles/aiplatform.viewer group:team0@example.com`,
    ]);
    expectExit(imported, 0);
    expect(imported.stdout).toContain('viewers["team00"]: Import complete');
    const moved = await runCli(["state", "mv", 'viewers["team00"]', 'viewers["ops"]', "-f", stack, "--state", state], {
      cwd: ws.dir,
    });
    expectExit(moved, 0);
    const listed = await runCli(["state", "list", "-f", stack, "--state", state], { cwd: ws.dir });
    expect(listed.stdout.trim()).toBe('viewers["ops"]');
  });
});
