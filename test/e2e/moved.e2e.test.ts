// Issue 18, refactoring without churn: a `moved:` entry renames a resource in the state at the
// next plan, shown as "# old has moved to new", with no cloud write; a move between two forEach
// names moves every instance; errors (a cycle, a target not declared) are positioned.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";
import { BINDING_T, MEMBER_T, ep, rp, setCalls } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const HEAD = "name: moves\nprovider:\n  project: my-project\n  location: us-central1\n";
const binding = (name: string) =>
  `  ${name}:\n    type: ${BINDING_T}\n    properties:\n      name: nightly\n      role: ` +
  `roles/gkebackup.viewer\n      members: [user:alice@example.com]\n`;
const members = (name: string) =>
  `  ${name}:\n    type: ${MEMBER_T}\n    options:\n      forEach: [sre, data]\n    properties:\n      ` +
  `name: churn\n      role: roles/aiplatform.viewer\n      member: group:\${each.value}@example.com\n`;

const ws = useEmulatorWorkspace(SEED, "converge-moved-");

async function addresses(state: string): Promise<string[]> {
  return (JSON.parse(await readFile(state, "utf8")) as State).resources.map((r) => r.address).sort();
}

describe("moved", () => {
  it("renames in the state with no cloud write, and then plans no changes", async () => {
    const stack = join(ws.dir, "stack.yaml");
    const state = join(ws.dir, "moves.json");
    const cli = (args: string[]) => runCli([...args, "-f", stack, "--state", state], { cwd: ws.dir, emulator: ws.emu });
    await writeFile(stack, `${HEAD}resources:\n${binding("viewers")}${members("teams")}`);
    expectExit(await cli(["apply", "--auto-approve"]), 0);

    await writeFile(
      stack,
      `${HEAD}moved:\n  - from: viewers\n    to: readers\n  - from: teams\n    to: ` +
        `groups\nresources:\n${binding("readers")}${members("groups")}`,
    );
    await resetStats(ws.emu);
    const planned = await cli(["plan"]);
    expectExit(planned, 0);
    expect(planned.stdout).toContain("# viewers has moved to readers (state only: no cloud change)");
    expect(planned.stdout).toContain('# teams["sre"] has moved to groups["sre"]');
    expect(planned.stdout).toContain("0 to add, 0 to change, 0 to destroy");
    // Nothing but moves: no legend of symbols that the plan does not use.
    expect(planned.stdout).not.toContain("Resource actions are indicated with the following symbols");
    const json = await cli(["plan", "--json"]);
    const changes = (
      JSON.parse(json.stdout) as {
        resource_changes: { address: string; previous_address?: string; change: { actions: string[] } }[];
      }
    ).resource_changes;
    expect(changes.find((c) => c.address === "readers")).toMatchObject({
      previous_address: "viewers",
      change: { actions: ["no-op"] },
    });

    expectExit(await cli(["apply", "--auto-approve"]), 0);
    const s = await stats(ws.emu);
    expect(setCalls(s)).toBe(0);
    expect(totalRequests(s)).toBeGreaterThan(0); // reads only
    expect(await addresses(state)).toEqual(['groups["data"]', 'groups["sre"]', "readers"]);
    const again = await cli(["plan"]);
    expect(again.stdout).toContain("No changes.");
  });

  it("reports a cycle and a target the stack does not declare, positioned", async () => {
    const stack = join(ws.dir, "bad.yaml");
    await writeFile(
      stack,
      `${HEAD}moved:\n  - from: a\n    to: b\n  - from: b\n    to: a\n  - from: ` +
        `old\n    to: nowhere\nresources:\n${binding("readers")}`,
    );
    const r = await runCli(["validate", "-f", stack], { cwd: ws.dir });
    expectExit(r, 1);
    expect(r.stderr).toContain("bad.yaml:6:5: Error: moved[0]: the moves form a cycle: a -> b -> a");
    expect(r.stderr).toContain("bad.yaml:11:9: Error: moved[2]: nowhere is not declared in the stack");
  });
});
