// SIGINT and SIGTERM outside the refresh and the apply: while a large plan is printed (the state
// lock held), between the plan and the apply, and in `plan`'s output. Before, Node's default
// handling killed the process by the signal: no message, and the state lock file stayed behind
// (on a shared filesystem another host then needs force-unlock). Now the command stops, releases
// the lock, says so in one line on stderr and exits 130, as the handlers of the plan and apply
// phases do (for SIGTERM too).
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { expectExit, runCli, startCli, type StartedCli } from "./helpers.js";
import { useGeneratedStack } from "./interrupt-helpers.js";

const N = 2000;
const big = useGeneratedStack("converge-signals-", N);

const lockFile = () => `${big.statePath}.lock`;
const cli = (args: string[]) =>
  startCli([...args, "-f", big.stackFile, "--state", big.statePath, "--parallelism", "4"], {
    cwd: big.dir,
    emulator: big.emu,
    timeoutMs: 120_000,
  });

/** Waits for `text`, stops reading stdout (the CLI blocks writing the rest), sends `signal`, then reads on. */
async function signalWhileWriting(c: StartedCli, text: string, signal: NodeJS.Signals): Promise<void> {
  await c.waitFor(text);
  c.child.stdout!.pause();
  c.child.kill(signal);
  await new Promise((r) => setTimeout(r, 300));
  c.child.stdout!.resume();
}

/** The interrupted command: exit 130 (not death by the signal), a message on stderr, no lock left. */
function expectStopped(
  r: { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string },
  message: RegExp,
): void {
  expectExit(r as Parameters<typeof expectExit>[0], 130);
  expect(r.signal).toBeNull();
  expect(r.stderr).toMatch(message);
  expect(existsSync(lockFile())).toBe(false);
}

describe(`signals outside the plan and apply phases (${N} resources)`, () => {
  it("apply: SIGTERM while the plan is printed (lock held) exits 130, says so, and releases the lock", async () => {
    const c = cli(["apply", "--auto-approve"]);
    await signalWhileWriting(c, "will be created", "SIGTERM");
    const r = await c.doneWithin(30_000);
    expectStopped(r, /Interrupted \(SIGTERM\)/);
    expect(r.stdout).not.toContain("Apply complete!");
  }, 120_000);

  it("apply: SIGINT while the plan is printed exits 130 the same way", async () => {
    const c = cli(["apply", "--auto-approve"]);
    await signalWhileWriting(c, "will be created", "SIGINT");
    const r = await c.doneWithin(30_000);
    expectStopped(r, /Interrupted \(SIGINT\)/);
  }, 120_000);

  it("apply: SIGTERM when `Plan: ` appears exits 130 with the lock released", async () => {
    const c = cli(["apply", "--auto-approve"]);
    await c.waitFor("Plan: ");
    c.child.kill("SIGTERM");
    const r = await c.doneWithin(30_000);
    expectStopped(r, /Interrupt/);
  }, 120_000);

  it("plan: SIGTERM while its output is written exits 130 with a message", async () => {
    const c = cli(["plan"]);
    await signalWhileWriting(c, "will be created", "SIGTERM");
    const r = await c.doneWithin(30_000);
    expectStopped(r, /Interrupted \(SIGTERM\)/);
  }, 120_000);

  it("the next apply converges from what the interrupted ones left", async () => {
    const r = await runCli(["apply", "--auto-approve", "-f", big.stackFile, "--state", big.statePath], {
      cwd: big.dir,
      emulator: big.emu,
      timeoutMs: 120_000,
    });
    expectExit(r, 0);
    expect(r.stderr).not.toMatch(/lock/i);
    const p = await runCli(["plan", "--detailed-exitcode", "-f", big.stackFile, "--state", big.statePath], {
      cwd: big.dir,
      emulator: big.emu,
      timeoutMs: 120_000,
    });
    expectExit(p, 0);
  }, 240_000);
});
