// Issue 45's targets side by side: each verdict read from one results file.
import { describe, expect, it } from "vitest";
import { issue45Section } from "../../bench/issue45.js";
import type { OverlapResult, StartupResult } from "../../bench/extras.js";
import type { ScenarioResult } from "../../bench/scenarios.js";

const startup: StartupResult = {
  pairs: 3,
  validateN: 2_000,
  nodeMs: [40, 40, 40],
  versionMs: [200, 210, 190],
  validateMs: [290, 300, 310],
  large: { n: 10_000, validateMs: [600, 620, 640] },
  loadAvg1: [1, 1, 1],
};
const overlap: OverlapResult = {
  n: 2_000,
  p: 240,
  latencyMs: 20,
  parallelism: 10,
  boundMs: 480,
  planMs: [1_100, 1_200],
  validateMs: [500, 600],
  refreshSpanMs: [500, 520],
  reads: 240,
  loadAvg1: [1, 1],
  floorMs: [500, 600],
};
const far: OverlapResult = {
  ...overlap,
  n: 10_000,
  p: 1_200,
  latencyMs: 100,
  boundMs: 12_000,
  planMs: [12_600],
  validateMs: [600],
};
const noop = (n: number, wallMs: number, maxRssMB: number) =>
  ({ batching: true, latencyMs: 0, n, scenario: "noop-plan", wallMs, maxRssMB }) as unknown as ScenarioResult;

describe("issue45Section", () => {
  it("gives every target its figure and verdict from one run", () => {
    const section = issue45Section({
      results: [noop(10_000, 900, 150), noop(100_000, 7_000, 900)],
      startup,
      overlap,
      far,
    });
    expect(section.verdicts.map((v) => [v.figure, v.met])).toEqual([
      ["0.10 s", true], // 300 − 200
      ["0.42 s", false], // 620 − 200
      ["0.90 s", true],
      ["150 MB", true],
      ["7.00 s", false],
      ["900 MB", true],
      ["1.09x", true], // (1,150 − 550) / 550
      ["1.00x", true], // 12,600 / (12,000 + 600)
    ]);
    expect(section.rows.map((r) => r[1])).toEqual(["12.60 s", "12.00 s", "0.60 s", "0.55 s"]);
  });

  it("says not run for what the run did not measure", () => {
    const section = issue45Section({ results: [] });
    expect(section.verdicts.every((v) => v.figure === "not run" && v.met === undefined)).toBe(true);
  });
});
