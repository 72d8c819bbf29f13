// A grant converge created and then moved to another resource of the stack in one apply (a rename
// without `moved:`) stays converge's own: the plan (text and --json) does not claim it was granted
// outside converge, the saved plan applies, the state does not record it as adopted, and destroy
// revokes it.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";
import { membersOf, policyIn, readStateFile, rp, stackHead } from "./apply-helpers.js";

const ADMIN = "roles/gkebackup.admin";
const ZOE = "user:zoe@example.com";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
};

const member = (address: string) =>
  `  ${address}:\n    type: cloudnative:backup/v1:RestorePlanIamMember\n    properties:\n     ` +
  ` name: nightly\n      role: ${ADMIN}\n      member: ${ZOE}\n`;

const ws = useEmulatorWorkspace(SEED, "converge-move-ownership-");

describe("a grant moved between resources of the stack", () => {
  it("is not adopted by the resource it moves to, and destroy revokes it", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "moves.json");
    const cli = (...args: string[]) =>
      runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });

    await writeFile(stackFile, stackHead("moves") + member("m1"));
    expectExit(await cli("apply", "--auto-approve"), 0);
    expect(membersOf(policyIn(await world(ws.emu), rp("nightly")), ADMIN)).toEqual([ZOE]);

    await writeFile(stackFile, stackHead("moves") + member("m2"));
    const planFile = join(ws.dir, "rename.plan");
    const planned = await cli("plan", "--out", planFile);
    expectExit(planned, 0);
    expect(planned.stdout).toMatch(/# m2 will be created/);
    expect(planned.stdout).not.toContain("granted outside converge");
    const json = await cli("plan", "--json");
    expectExit(json, 0);
    expect(json.stdout).toContain('"m2"');
    expect(json.stdout).not.toContain("adopted");

    // The saved plan is compared with a fresh one before it is applied: they agree.
    const applied = await runCli(["apply", planFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    expectExit(applied, 0);
    expect(applied.stdout).not.toContain("granted outside converge");
    const state = await readStateFile(statePath);
    expect(state.resources.map((r) => [r.address, r.adopted])).toEqual([["m2", undefined]]);
    expect(membersOf(policyIn(await world(ws.emu), rp("nightly")), ADMIN)).toEqual([ZOE]);

    const destroyed = await cli("destroy", "--auto-approve");
    expectExit(destroyed, 0);
    expect(destroyed.stdout).not.toContain("the grant stays in place");
    expect(membersOf(policyIn(await world(ws.emu), rp("nightly")), ADMIN)).toEqual([]);
    expect((await readStateFile(statePath)).resources).toEqual([]);
  });
});
