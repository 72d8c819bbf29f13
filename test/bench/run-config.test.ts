// runConfig (bench/scenarios.ts) end to end on a stand-in CLI (a script that prints what the real
// one prints for each scenario) and a stand-in emulator: what it returns, not how long it took.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BenchEmulator } from "../../bench/emulator.js";
import { shapeOf, type Generated } from "../../bench/generate.js";
import { runConfig } from "../../bench/scenarios.js";

const dir = mkdtempSync(join(tmpdir(), "converge-run-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shape = shapeOf(100);
/** Prints the summary line the real CLI prints for the command it is given. */
const FAKE_CLI =
  `
const args = process.argv.slice(2);
process.stdout.write(args[0] === "apply" ? "Apply complete! ` +
  `Resources: ${shape.n} added, 0 changed, 0 destroyed.\\n" : "No changes. Your infrastructure matches the ` +
  `configuration.\\n");
`;

function fakeEmulator(): BenchEmulator {
  return {
    hostPort: "127.0.0.1:9",
    reset: async () => {},
    resetStats: async () => {},
    stats: async () => ({
      requests: { "gkebackup.projects.locations.restorePlans.getIamPolicy": shape.p },
      responses: {},
    }),
    setLatency: async () => {},
    setFaults: async () => {},
    stop: async () => {},
    crashed: new Promise<string>(() => {}),
  };
}

describe("runConfig", () => {
  it("gives one result per scenario when a scenario is run several times, with every run in it", async () => {
    const bin = join(dir, "fake-cli.mjs");
    writeFileSync(bin, FAKE_CLI);
    const inputs: Generated = {
      shape,
      seed: join(dir, "seed.yaml"),
      stack: join(dir, "stack.yaml"),
      changedStack: join(dir, "changed.yaml"),
    };
    const results = await runConfig(
      {
        n: shape.n,
        latencyMs: 0,
        batching: true,
        parallelism: 10,
        repeat: 1,
        scenarios: ["cold-apply", "noop-plan", "noop-plan", "noop-plan"],
      },
      {
        bin,
        emulator: fakeEmulator(),
        inputs,
        workdir: dir,
        useGnuTime: false,
        log: () => {},
        floorSpan: async (_host, p, parallelism) => p * parallelism,
      },
    );
    expect(results.map((r) => r.scenario)).toEqual(["cold-apply", "noop-plan"]);
    expect(results.map((r) => r.runs.length)).toEqual([1, 3]);
    // At L = 0 too, each result has the bare loop's span of its P reads and its stack's validate time.
    expect(results.map((r) => r.floorMs)).toEqual([shape.p * 10, shape.p * 10]);
    expect(results.every((r) => r.validateMs! > 0)).toBe(true);
  }, 60_000);
});
