// Issue 11, item 4: a member resource created for a grant that already exists live is adopted, not
// silently claimed: the plan says so, and destroy leaves the grant in place (the world returns to
// how converge found it). An imported resource is owned: destroy removes it.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import { ep, memberYaml, membersOf, policyIn, readStateFile, setCalls, stackHead } from "./apply-helpers.js";

const USER = "roles/aiplatform.user";
const DANA = "user:dana@example.com";
const ERIN = "user:erin@example.com";
const FRED = "user:fred@example.com";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: ep("churn"), policy: { bindings: [{ role: USER, members: [DANA, ERIN] }] } }],
};

const STACK =
  stackHead("adopt") +
  memberYaml("dana", "churn", USER, DANA) +
  memberYaml("erin", "churn", USER, ERIN, `    options:\n      import: churn ${USER} ${ERIN}\n`) +
  memberYaml("fred", "churn", USER, FRED);

const ws = useEmulatorWorkspace(SEED, "converge-apply-adopt-");

describe("grants that already exist", () => {
  it("are adopted by a new member resource, and destroy leaves them; imported and new grants are removed", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "adopt.json");
    const cli = (...args: string[]) =>
      runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    await writeFile(stackFile, STACK);

    const planned = await cli("plan");
    expectExit(planned, 0);
    expect(planned.stdout).toMatch(
      /# dana will be created[^]*# already granted outside converge: converge will adopt it/,
    );
    expect(planned.stdout).not.toMatch(/# fred will be created\n[^#]*# already granted/);

    expectExit(await cli("apply", "--auto-approve"), 0);
    const state = await readStateFile(statePath);
    const byAddress = new Map(state.resources.map((r) => [r.address, r]));
    expect(byAddress.get("dana")?.adopted).toBe(true);
    expect(byAddress.get("erin")?.adopted).toBeUndefined();
    expect(byAddress.get("fred")?.adopted).toBeUndefined();

    const destroyPlan = await cli("plan", "--destroy");
    expectExit(destroyPlan, 0);
    expect(destroyPlan.stdout).toMatch(
      /# dana will be destroyed[^]*# granted outside converge before it was adopted: the grant stays in place/,
    );

    await resetStats(ws.emu);
    const destroyed = await cli("destroy", "--auto-approve");
    expectExit(destroyed, 0);
    expect(membersOf(policyIn(await world(ws.emu), ep("churn")), USER)).toEqual([DANA]);
    expect(setCalls(await stats(ws.emu))).toBe(1);
    expect((await readStateFile(statePath)).resources).toEqual([]);
  });
});
