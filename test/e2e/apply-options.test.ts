// Issue 11, items 6 and 7: `protect` takes effect from the stack as written, even when it is the
// only change; `members: []` converges (the next plan is empty) and lint says what it removes.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import { bindingYaml, membersOf, policyIn, readStateFile, rp, setCalls, stackHead } from "./apply-helpers.js";

const VIEWER = "roles/gkebackup.viewer";
const ALICE = "user:alice@example.com";
const CAROL = "user:carol@example.com";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    { name: rp("guarded"), policy: { bindings: [] } },
    { name: rp("emptied"), policy: { bindings: [{ role: VIEWER, members: [CAROL] }] } },
    { name: rp("pinned"), policy: { bindings: [] } },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-options-");

function workspace(name: string) {
  const stackFile = join(ws.dir, `${name}.yaml`);
  const statePath = join(ws.dir, `${name}.json`);
  const cli = (...args: string[]) =>
    runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
  return { stackFile, statePath, cli };
}

const KEEP = (protect?: boolean) =>
  stackHead("guarded") +
  bindingYaml(
    "keep",
    "guarded",
    VIEWER,
    [ALICE],
    protect === undefined ? "" : `    options:\n      protect: ${protect}\n`,
  );

describe("protect", () => {
  it(
    "added alone protects at the next destroy without an apply; " + "recorded by apply; removed alone unprotects",
    async () => {
      const { stackFile, statePath, cli } = workspace("guarded");
      await writeFile(stackFile, KEEP());
      expectExit(await cli("apply", "--auto-approve"), 0);

      // protect: true is the only change: destroy is refused from the stack as written.
      await writeFile(stackFile, KEEP(true));
      const stateBefore = await readFile(statePath);
      await resetStats(ws.emu);
      const refused = await cli("destroy", "--auto-approve");
      expectExit(refused, 1);
      expect(refused.stderr).toMatch(/keep has protect: true/);
      expect(setCalls(await stats(ws.emu))).toBe(0);
      expect((await readFile(statePath)).equals(stateBefore)).toBe(true);

      // The plan shows the state-only change; apply records it without a cloud write.
      const planned = await cli("plan", "--detailed-exitcode");
      expectExit(planned, 2);
      expect(planned.stdout).toMatch(/keep will be protected \(state only/);
      expect(planned.stdout).toMatch(/Plan: 0 to import, 0 to add, 0 to change, 0 to destroy/);
      expectExit(await cli("apply", "--auto-approve"), 0);
      expect(setCalls(await stats(ws.emu))).toBe(0);
      expect((await readStateFile(statePath)).resources[0]?.protect).toBe(true);
      expectExit(await cli("plan", "--detailed-exitcode"), 0);

      // Removed from the stack, it stays protected (from the state).
      await writeFile(stackFile, stackHead("guarded").replace(/resources:\n$/, "resources: {}\n"));
      const orphan = await cli("plan");
      expectExit(orphan, 1);
      expect(orphan.stderr).toMatch(/keep has protect: true/);

      // protect: false alone unprotects at once.
      await writeFile(stackFile, KEEP(false));
      expectExit(await cli("destroy", "--auto-approve"), 0);
      expect(membersOf(policyIn(await world(ws.emu), rp("guarded")), VIEWER)).toEqual([]);
    },
  );

  it(
    "refuses a change that replaces a protected resource, and --replace of " +
      "it: exit 1, at its protect option, nothing written",
    async () => {
      const { stackFile, statePath, cli } = workspace("pinned");
      const pinned = (member: string) =>
        stackHead("pinned") +
        `  m:\n    type: cloudnative:backup/v1:RestorePlanIamMember\n    properties:\n      name: pinned\n    ` +
        `  role: ${VIEWER}\n      member: ${member}\n    options:\n      protect: true\n`;
      await writeFile(stackFile, pinned("user:zed@example.com"));
      expectExit(await cli("apply", "--auto-approve"), 0);
      const stateBefore = await readFile(statePath);
      const worldBefore = policyIn(await world(ws.emu), rp("pinned"));
      expect(membersOf(worldBefore, VIEWER)).toEqual(["user:zed@example.com"]);
      await resetStats(ws.emu);

      // A new member replaces the resource: the old grant would be revoked.
      await writeFile(stackFile, pinned("user:amy@example.com"));
      const refused = await cli("apply", "--auto-approve");
      expectExit(refused, 1);
      expect(refused.stderr).toMatch(/pinned\.yaml:13:\d+: .*m has protect: true and cannot be replaced/);
      expect(refused.stderr).toMatch(/changing member replaces it/);
      expect(refused.stdout).not.toMatch(/loses roles\/gkebackup\.viewer/);

      // --replace is refused the same way.
      await writeFile(stackFile, pinned("user:zed@example.com"));
      const forced = await cli("apply", "--auto-approve", "--replace", "m");
      expectExit(forced, 1);
      expect(forced.stderr).toMatch(/m has protect: true and cannot be replaced/);

      expect(setCalls(await stats(ws.emu))).toBe(0);
      expect((await readFile(statePath)).equals(stateBefore)).toBe(true);
      expect(policyIn(await world(ws.emu), rp("pinned"))).toEqual(worldBefore);
    },
  );
});

describe("members: []", () => {
  it("removes every member of the role, warns about it, and the next plan is empty", async () => {
    const { stackFile, cli } = workspace("emptied");
    await writeFile(stackFile, stackHead("emptied") + bindingYaml("none", "emptied", VIEWER, []));
    const planned = await cli("plan");
    expectExit(planned, 0);
    expect(planned.stderr).toMatch(
      /none: members is empty: this binding removes every member of roles\/gkebackup.viewer/,
    );
    expectExit(await cli("apply", "--auto-approve"), 0);
    expect(membersOf(policyIn(await world(ws.emu), rp("emptied")), VIEWER)).toEqual([]);
    const next = await cli("plan", "--detailed-exitcode");
    expectExit(next, 0);
    expect(next.stdout).toContain("No changes.");
  });
});
