// Issue 36, item 5: a closed stdout (`converge apply --auto-approve | head -3`) is an interrupt.
// Before, the first write after the reader left ended the process at once with exit 0: grants
// written, the state not saved (the next plan adopted them), the lock left. Now, during an apply,
// no new write starts, the writes in flight finish, the state is saved, the lock released, and
// converge exits 141 (128 + SIGPIPE); what it would have printed meanwhile is dropped. Outside
// the apply (while the plan is printed) it stops at once with nothing written, and `plan --out`
// whose output was not all read saves no plan: exit 141 too, never 0.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, resetStats, startCli, stats, useEmulatorWorkspace } from "./helpers.js";
import { clearFaults, M, setCalls, setFaults } from "./apply-helpers.js";
import {
  expectRestPlanned,
  expectSavedAsLive,
  GRANTS_SEED,
  useGeneratedStack,
  writeGrantStack,
} from "./interrupt-helpers.js";

const ws = useEmulatorWorkspace(GRANTS_SEED, "converge-closed-output-");

describe("stdout closed by its reader during an apply", () => {
  it.each([
    ["text", [], ": Creation complete"],
    ["json", ["--json"], '"type":"apply_complete"'],
  ])(
    "%s: no new write starts, the state is saved with every grant written, exit 141; the next plan adopts nothing",
    async (tag, flags, line) => {
      const s = await writeGrantStack(ws.dir, tag);
      // Slow writes two at a time: the apply of 20 grants takes 3 s.
      await setFaults(ws.emu, { latencyMs: 300, methods: [M.epSet] });
      const cli = startCli(["apply", "--auto-approve", "--parallelism", "2", ...flags, ...s.files], {
        cwd: ws.dir,
        emulator: ws.emu,
      });
      await cli.waitFor(line);
      // The reader has read enough (`| head`): converge's next write to stdout fails with EPIPE.
      cli.child.stdout!.destroy();
      const r = await cli.doneWithin(30_000);
      await clearFaults(ws.emu);

      expectExit(r, 141);
      expect(r.signal).toBeNull();
      expect(r.stderr).toContain("Output closed (stdout: EPIPE)");
      expect(r.stderr).not.toMatch(/internal error|Error:|at .*\.js:\d+/);
      const saved = await expectSavedAsLive(ws.emu, s, tag);
      expect(saved.length).toBeGreaterThan(0);
      await expectRestPlanned(ws.emu, ws.dir, s, saved);
    },
    120_000,
  );
});

describe("stdout closed while a large plan is printed (2,000 resources)", () => {
  const big = useGeneratedStack("converge-closed-plan-", 2000);
  const cli = (args: string[]) =>
    startCli([...args, "-f", big.stackFile, "--state", big.statePath], {
      cwd: big.dir,
      emulator: big.emu,
      timeoutMs: 120_000,
    });

  it.each([
    ["text", [], "will be created"],
    ["json", ["--json"], '"format_version"'],
  ])(
    "plan --out (%s): exits 141 and saves no plan",
    async (kind, flags, line) => {
      const out = join(big.dir, "out", `plan-${kind}.json`);
      const c = cli(["plan", "--out", out, ...flags]);
      await c.waitFor(line);
      c.child.stdout!.destroy();
      const r = await c.doneWithin(60_000);

      expectExit(r, 141);
      expect(r.signal).toBeNull();
      expect(existsSync(out)).toBe(false);
      // No temporary file of the plan is left beside it either.
      expect(existsSync(join(big.dir, "out")) ? readdirSync(join(big.dir, "out")) : []).toEqual([]);
    },
    120_000,
  );

  it("apply: exits 141 with nothing written to the cloud or the state, and no lock left", async () => {
    await resetStats(big.emu);
    const c = cli(["apply", "--auto-approve"]);
    await c.waitFor("will be created");
    c.child.stdout!.destroy();
    const r = await c.doneWithin(60_000);

    expectExit(r, 141);
    expect(setCalls(await stats(big.emu))).toBe(0);
    expect(existsSync(big.statePath)).toBe(false);
    expect(existsSync(`${big.statePath}.lock`)).toBe(false);
  }, 120_000);
});
