// Issue 11, item 5: Ctrl-C while planning (the refresh reads of plan, apply and destroy) exits 130
// promptly, releases the state lock, writes nothing to the cloud and nothing to the state.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { type EmulatorStats, expectExit, resetStats, runCli, startCli, stats, useStackWorkspace } from "./helpers.js";
import { bindingYaml, clearFaults, count, M, responses, rp, setFaults, stackHead } from "./apply-helpers.js";

const N = 100;
const ids = Array.from({ length: N }, (_, i) => String(i).padStart(3, "0"));
const ROLE = "roles/gkebackup.viewer";
const STACK =
  stackHead("plan-ctrl-c") +
  ids.map((i) => bindingYaml(`b${i}`, `plan-${i}`, ROLE, [`user:u${i}@example.com`])).join("");
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ids.map((i) => ({ name: rp(`plan-${i}`), policy: { bindings: [] } })),
};

const ws = useStackWorkspace(SEED, "converge-plan-ctrl-c-", STACK, "plan-ctrl-c.json");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** getIamPolicy reads the emulator has taken and not yet answered (with any status). */
const unanswered = (s: EmulatorStats) =>
  count(s, M.rpGet) - Object.values(s.responses?.[M.rpGet] ?? {}).reduce((a, b) => a + b, 0);

/** The state file and its backup as bytes (undefined when absent). */
async function stateFiles(): Promise<(string | undefined)[]> {
  return Promise.all([ws.statePath, `${ws.statePath}.backup`].map((p) => readFile(p, "utf8").catch(() => undefined)));
}

describe("Ctrl-C while planning", () => {
  // Half of the stack applied first: `apply` then has writes to make and `destroy` grants to revoke.
  const half = ids.slice(0, N / 2).map((i) => `b${i}`);

  it.each([["plan"], ["apply", "--auto-approve"], ["destroy", "--auto-approve"]])(
    "%s: exits 130 promptly, releases the lock, writes nothing",
    async (...command) => {
      if (!existsSync(ws.statePath)) {
        const first = await runCli(
          [
            "apply",
            "--auto-approve",
            ...half.flatMap((a) => ["--target", a]),
            "-f",
            ws.stackFile,
            "--state",
            ws.statePath,
          ],
          { cwd: ws.dir, emulator: ws.emu, timeoutMs: 60_000 },
        );
        expectExit(first, 0);
      }
      const before = await stateFiles();
      // The reads an earlier case's interrupted command left in flight are answered (and counted)
      // when their delay ends, even after it exited: counted after the reset, they looked like this
      // command's two answers and the signal came before it listened for one (it died of SIGINT
      // with no output). Reset once every read the emulator took has been answered.
      while (unanswered(await stats(ws.emu)) > 0) await sleep(50);
      await resetStats(ws.emu);
      // Slow reads at --parallelism 2: refreshing 100 policies takes 20 s.
      await setFaults(ws.emu, { latencyMs: 400, methods: [M.rpGet] });
      const cli = startCli([...command, "--parallelism", "2", "-f", ws.stackFile, "--state", ws.statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
      });
      while (responses(await stats(ws.emu), M.rpGet, "OK") < 2) await sleep(50);
      const signalledAt = Date.now();
      cli.child.kill("SIGINT");
      const r = await cli.doneWithin(5_000);
      await clearFaults(ws.emu);

      expectExit(r, 130);
      expect(r.endedAt - signalledAt, cli.output()).toBeLessThan(2_000);
      expect(r.stderr).toContain("Interrupted while planning: nothing was changed.");
      const after = await stats(ws.emu);
      expect(count(after, M.rpGet)).toBeLessThan(N); // the refresh stopped
      expect(count(after, M.rpSet)).toBe(0);
      expect(existsSync(`${ws.statePath}.lock`)).toBe(false);
      expect(await stateFiles()).toEqual(before);

      // The next command finds no lock and the state as it was.
      const next = await runCli(["plan", "-f", ws.stackFile, "--state", ws.statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
        timeoutMs: 60_000,
      });
      expectExit(next, 0);
      expect(next.stderr).not.toMatch(/lock/i);
      expect(next.stdout).toContain(`Plan: 0 to import, ${N - half.length} to add, 0 to change, 0 to destroy.`);
    },
    60_000,
  );
});
