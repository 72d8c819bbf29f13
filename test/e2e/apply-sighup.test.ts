// Issue 36, item 5: SIGHUP (a closed terminal or SSH session) is handled like SIGTERM, with its own
// exit code, 129 (128 + 1). Before, nothing caught it and it killed converge mid-apply as SIGKILL
// would: grants written, the state not saved, the lock left. Now, during the apply, no new write
// starts, the writes in flight finish, the state is saved and converge exits 129, even when the
// terminal is gone and every write to it fails; while planning it stops with nothing changed;
// outside the phases it releases the lock and exits 129 at once.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { expectExit, resetStats, startCli, type StartedCli, stats, useEmulatorWorkspace } from "./helpers.js";
import { clearFaults, count, M, responses, setFaults } from "./apply-helpers.js";
import {
  expectRestPlanned,
  expectSavedAsLive,
  GRANTS,
  GRANTS_SEED,
  useGeneratedStack,
  writeGrantStack,
} from "./interrupt-helpers.js";

const ws = useEmulatorWorkspace(GRANTS_SEED, "converge-apply-sighup-");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `apply --auto-approve` of stack `tag` with slow writes (300 ms) two at a time. */
async function slowApply(tag: string) {
  const s = await writeGrantStack(ws.dir, tag);
  await setFaults(ws.emu, { latencyMs: 300, methods: [M.epSet] });
  const cli = startCli(["apply", "--auto-approve", "--parallelism", "2", ...s.files], {
    cwd: ws.dir,
    emulator: ws.emu,
  });
  return { s, cli };
}

describe("SIGHUP during an apply", () => {
  it(
    "finishes the writes in flight, starts no other, saves the state " + "and exits 129; the next plan adopts nothing",
    async () => {
      const { s, cli } = await slowApply("hup");
      await cli.waitFor(": Creation complete");
      cli.child.kill("SIGHUP");
      const r = await cli.doneWithin(30_000);
      await clearFaults(ws.emu);

      expectExit(r, 129);
      expect(r.signal).toBeNull();
      expect(r.stderr).toContain("Hangup (SIGHUP) received. Finishing in-flight calls and saving the state");
      const saved = await expectSavedAsLive(ws.emu, s, "hup");
      expect(saved.length).toBeGreaterThan(0);
      if (saved.length < GRANTS)
        expect(r.stderr).toMatch(
          /Apply interrupted: \d+ added, 0 changed, 0 destroyed before the interrupt; \d+ not started\. State saved\./,
        );
      await expectRestPlanned(ws.emu, ws.dir, s, saved);
    },
    120_000,
  );

  it("with the terminal gone (every write after the hangup fails), still saves the state and exits 129", async () => {
    const { s, cli } = await slowApply("gone");
    await cli.waitFor(": Creation complete");
    cli.child.kill("SIGHUP");
    await cli.waitFor("Hangup (SIGHUP) received");
    // The terminal closed: what converge writes from now on fails (EPIPE here, EIO on a terminal).
    cli.child.stdout!.destroy();
    cli.child.stderr!.destroy();
    const r = await cli.doneWithin(30_000);
    await clearFaults(ws.emu);

    expectExit(r, 129);
    const saved = await expectSavedAsLive(ws.emu, s, "gone");
    expect(saved.length).toBeGreaterThan(0);
    await expectRestPlanned(ws.emu, ws.dir, s, saved);
  }, 120_000);

  it("while planning: stops the refresh, changes nothing and exits 129", async () => {
    const s = await writeGrantStack(ws.dir, "planning");
    await resetStats(ws.emu);
    // Slow reads two at a time: the refresh of 20 policies takes 4 s.
    await setFaults(ws.emu, { latencyMs: 400, methods: [M.epGet] });
    const cli = startCli(["apply", "--auto-approve", "--parallelism", "2", ...s.files], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    while (responses(await stats(ws.emu), M.epGet, "OK") < 2) await sleep(50);
    cli.child.kill("SIGHUP");
    const r = await cli.doneWithin(30_000);
    await clearFaults(ws.emu);

    expectExit(r, 129);
    expect(r.stderr).toContain("Interrupted while planning: nothing was changed.");
    expect(count(await stats(ws.emu), M.epSet)).toBe(0);
    expect(existsSync(s.statePath)).toBe(false);
    expect(existsSync(`${s.statePath}.lock`)).toBe(false);
  }, 120_000);
});

describe("SIGHUP outside the plan and apply phases (2,000 resources)", () => {
  const big = useGeneratedStack("converge-sighup-outside-", 2000);
  const cli = (args: string[]) =>
    startCli([...args, "-f", big.stackFile, "--state", big.statePath, "--parallelism", "4"], {
      cwd: big.dir,
      emulator: big.emu,
      timeoutMs: 120_000,
    });

  /**
   * Waits for `text`, stops reading stdout (the CLI blocks writing the rest of the plan), sends SIGHUP, then reads on.
   */
  async function hangUpWhileWriting(c: StartedCli, text: string): Promise<void> {
    await c.waitFor(text);
    c.child.stdout!.pause();
    c.child.kill("SIGHUP");
    await sleep(300);
    c.child.stdout!.resume();
  }

  it.each([["apply", "--auto-approve"], ["plan"]])(
    "%s: SIGHUP while the plan is printed exits 129, says so, and leaves no lock",
    async (...command) => {
      const c = cli(command);
      await hangUpWhileWriting(c, "will be created");
      const r = await c.doneWithin(30_000);
      expectExit(r, 129);
      expect(r.signal).toBeNull();
      expect(r.stderr).toMatch(/Interrupted \(SIGHUP\): stopped/);
      expect(r.stdout).not.toContain("Apply complete!");
      expect(existsSync(`${big.statePath}.lock`)).toBe(false);
      expect(existsSync(big.statePath)).toBe(false);
    },
    120_000,
  );
});
