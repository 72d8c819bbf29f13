// Issue 11, item 5: Ctrl-C really stops. With 200 writes queued behind --parallelism 2, the first
// SIGINT lets the (at most 2) writes in flight finish and starts no other: queued work is dropped,
// not only unscheduled graph nodes. The process exits 130 at once, the state holds exactly the
// grants that were made, the summary counts what was not started, and the next apply converges.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import {
  expectExit,
  resetStats,
  runCli,
  startCli,
  stats,
  useEmulatorWorkspace,
  world,
  type EmulatorStats,
} from "./helpers.js";
import {
  bindingYaml,
  clearFaults,
  count,
  M,
  membersOf,
  policyIn,
  readStateFile,
  rp,
  setFaults,
  stackHead,
} from "./apply-helpers.js";

const N = 200;
const PARALLELISM = 2;
const ids = Array.from({ length: N }, (_, i) => String(i).padStart(3, "0"));
const ROLE = "roles/gkebackup.viewer";

const STACK =
  stackHead("ctrl-c") + ids.map((i) => bindingYaml(`b${i}`, `plan-${i}`, ROLE, [`user:u${i}@example.com`])).join("");
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ids.map((i) => ({ name: rp(`plan-${i}`), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-ctrl-c-");

/** setIamPolicy calls the emulator has answered, whatever the answer. */
const answeredSets = (s: EmulatorStats) => Object.values(s.responses?.[M.rpSet] ?? {}).reduce((a, b) => a + b, 0);

describe("Ctrl-C during an apply with queued writes", () => {
  it(
    "starts no queued write, exits 130 within 2 s, saves exactly " + "what was granted; the next apply converges",
    async () => {
      const stackFile = join(ws.dir, "stack.yaml");
      const statePath = join(ws.dir, "state.json");
      await writeFile(stackFile, STACK);
      // Slow writes only: the refresh reads stay fast, so that 200 writes wait behind 2 slots.
      await setFaults(ws.emu, { latencyMs: 400, methods: [M.rpSet] });
      await resetStats(ws.emu);

      const cli = startCli(
        ["apply", "--auto-approve", "--parallelism", String(PARALLELISM), "-f", stackFile, "--state", statePath],
        { cwd: ws.dir, emulator: ws.emu },
      );
      await cli.waitFor(": Creation complete");
      const signalledAt = Date.now();
      cli.child.kill("SIGINT");
      await cli.waitFor("Interrupt received");
      // Read once the CLI has seen the signal: every write it started before is counted as a
      // request, and at most PARALLELISM of them are still unanswered.
      const atSignal = await stats(ws.emu);
      const r = await cli.doneWithin(5_000);
      await clearFaults(ws.emu);
      const after = await stats(ws.emu);

      expectExit(r, 130);
      expect(r.endedAt - signalledAt, cli.output()).toBeLessThan(2_000);
      // No setIamPolicy started after the signal: only those in flight then were added.
      expect(count(after, M.rpSet)).toBeLessThanOrEqual(answeredSets(atSignal) + PARALLELISM);
      expect(answeredSets(after)).toBe(count(after, M.rpSet));

      // The state holds exactly the grants that were made.
      const live = await world(ws.emu);
      const granted = ids
        .filter((i) => membersOf(policyIn(live, rp(`plan-${i}`)), ROLE).length > 0)
        .map((i) => `b${i}`);
      const saved = (await readStateFile(statePath)).resources.map((x) => x.address).sort();
      expect(saved).toEqual(granted);
      expect(saved.length).toBe(count(after, M.rpSet));
      expect(saved.length).toBeGreaterThan(0);
      expect(saved.length).toBeLessThan(N);
      expect(r.stderr).toContain(
        `${saved.length} added, 0 changed, 0 destroyed before the interrupt; ` +
          `${N - saved.length} not started. State saved.`,
      );

      const again = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
        timeoutMs: 60_000,
      });
      expectExit(again, 0);
      expect(again.stdout).toContain(`Apply complete! Resources: ${N - saved.length} added, 0 changed, 0 destroyed.`);
      const plan = await runCli(["plan", "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
        timeoutMs: 60_000,
      });
      expectExit(plan, 0);
      expect(plan.stdout).toContain("No changes.");
    },
    120_000,
  );
});
