// The pure arithmetic behind the bench's verdicts on issue 20 (bench/targets.ts) and the verdicts
// themselves (bench/verdicts.ts), on made-up measurements: no timing is asserted here.
import { describe, expect, it } from "vitest";
import type { OverlapResult, QuotaRun, StartupResult } from "../../bench/extras.js";
import { quotaShape, seedYaml, stackYaml } from "../../bench/generate.js";
import type { ScenarioResult } from "../../bench/scenarios.js";
import {
  atMost,
  differenceOfMedians,
  growthExponent,
  growthRows,
  median,
  overall,
  quotaBoundMs,
  ratioOfMedians,
  roundBoundMs,
} from "../../bench/targets.js";
import {
  growth,
  issue20Sections,
  overlapSection,
  quotaSections,
  quotaVerdicts,
  scaleSections,
  startupSections,
} from "../../bench/verdicts.js";
import { parseStack } from "../../src/config/load.js";

describe("bounds and medians", () => {
  it("the network bound is whole rounds of `parallelism` calls", () => {
    expect(roundBoundMs(200, 10, 20)).toBe(400);
    expect(roundBoundMs(240, 10, 20)).toBe(480);
    expect(roundBoundMs(201, 10, 20)).toBe(420);
    expect(roundBoundMs(1_000, 10, 0)).toBe(0);
  });

  it("the quota bound is calls / Q minutes", () => {
    expect(quotaBoundMs(220, 600)).toBe(22_000);
    expect(quotaBoundMs(440, 1_200)).toBe(22_000);
  });

  it("median of odd and even counts; ratio and difference of medians of paired runs", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(ratioOfMedians({ a: [200, 220, 900], b: [100, 90, 110] })).toBeCloseTo(2.2);
    expect(differenceOfMedians({ a: [500, 600, 550], b: [300, 310, 290] })).toBe(250);
  });
});

describe("verdicts", () => {
  const fmt = (v: number) => `${v}`;
  it("met at the limit, not met above it, not run without a figure", () => {
    expect(atMost("t", 2, 2, fmt)).toEqual({ target: "t", figure: "2", limit: "≤ 2", met: true });
    expect(atMost("t", 2.01, 2, fmt).met).toBe(false);
    expect(atMost("t", undefined, 2, fmt)).toEqual({ target: "t", figure: "not run", limit: "≤ 2", met: undefined });
    expect(atMost("t", NaN, 2, fmt).met).toBeUndefined();
  });

  it("a target is met when every measured figure is; unknown when none is measured", () => {
    const met = atMost("a", 1, 2, fmt);
    const missed = atMost("b", 3, 2, fmt);
    const none = atMost("c", undefined, 2, fmt);
    expect(overall([met, none])).toBe(true);
    expect(overall([met, missed])).toBe(false);
    expect(overall([none])).toBeUndefined();
  });

  it("start-up: ratio of medians of --version to node -e 0; validate beyond --version", () => {
    const st: StartupResult = {
      pairs: 3,
      validateN: 2_000,
      nodeMs: [100, 90, 110],
      versionMs: [190, 200, 210],
      validateMs: [400, 460, 450],
      loadAvg1: [1, 1, 1],
    };
    const [version, validate] = startupSections(st);
    expect(version!.verdicts[0]).toMatchObject({ figure: "2.00x", limit: "≤ 2.00x", met: true });
    expect(validate!.verdicts[0]).toMatchObject({ figure: "0.25 s", met: true });
    const slow = startupSections({ ...st, versionMs: [300, 350, 360] });
    expect(slow[0]!.verdicts[0]).toMatchObject({ figure: "3.50x", met: false });
  });

  it("overlap: (plan − validate) over the bound of the policies actually generated", () => {
    const o: OverlapResult = {
      n: 2_000,
      p: 240,
      latencyMs: 20,
      parallelism: 10,
      boundMs: 480,
      planMs: [1_000, 1_020],
      validateMs: [500, 500],
      refreshSpanMs: [490, 500],
      reads: 240,
      loadAvg1: [1, 1],
    };
    const v = overlapSection(o).verdicts[0]!;
    expect(v.target).toContain("0.48 s");
    expect(v.figure).toBe(`${(510 / 480).toFixed(2)}x`);
    expect(v.met).toBe(true);
    expect(overlapSection({ ...o, planMs: [1_100, 1_100] }).verdicts[0]!.met).toBe(false);
  });

  const result = (
    n: number,
    scenario: ScenarioResult["scenario"],
    wallMs: number,
    maxRssMB: number,
    cpuMs = wallMs,
  ): ScenarioResult =>
    ({
      scenario,
      n,
      p: n / 10,
      latencyMs: 0,
      batching: true,
      parallelism: 10,
      wallMs,
      cpuMs,
      maxRssMB,
      runs: [{ wallMs, cpuUserMs: cpuMs, cpuSystemMs: 0, maxRssKB: maxRssMB * 1024, uptimeMs: wallMs, loadAvg1: 1 }],
    }) as ScenarioResult;

  it("scale: N = 10,000 and N = 100,000 against their wall and RSS limits", () => {
    const [mid, big] = scaleSections([
      result(10_000, "noop-plan", 900, 210),
      result(100_000, "noop-plan", 9_000, 900),
      result(100_000, "cold-apply", 31_000, 1_100),
    ]);
    expect(mid!.verdicts.map((v) => v.met)).toEqual([true, false]);
    expect(big!.verdicts.map((v) => v.met)).toEqual([true, true, false]);
    const [, notRun] = scaleSections([result(10_000, "noop-plan", 900, 150)]);
    expect(notRun!.verdicts.every((v) => v.met === undefined && v.figure === "not run")).toBe(true);
    // A scale run that failed (a crash at 100,000) is not met, with the reason; a measured figure stays.
    const [, failed] = scaleSections(
      [result(100_000, "cold-apply", 29_000, 900)],
      "N=100000 noop-plan: exit 134\nFATAL ERROR: heap out of memory",
    );
    expect(failed!.verdicts.map((v) => [v.figure, v.met])).toEqual([
      ["failed: N=100000 noop-plan: exit 134", false],
      ["failed: N=100000 noop-plan: exit 134", false],
      ["29.00 s", true],
    ]);
  });

  it(
    "scale: a no-op plan's floor (validate of its stack + its reads from a " +
      "bare loop) is shown under it, with what it means",
    () => {
      const noop = { ...result(10_000, "noop-plan", 1_600, 160), validateMs: 630, floorMs: 330 };
      const [mid, big] = scaleSections([
        noop,
        { ...result(100_000, "noop-plan", 10_000, 700), validateMs: 3_300, floorMs: 3_500 },
      ]);
      expect(mid!.rows.slice(1).map((r) => [r[0], r[1]])).toEqual([
        ["`converge validate` of the same stack", "0.63 s"],
        ["the same 1,000 reads from a bare HTTP loop", "0.33 s"],
        ["floor: the two together", "0.96 s"],
      ]);
      expect(mid!.note).toContain("at least 0.96 s here (60% of its median wall time)");
      expect(big!.rows.at(-1)).toEqual(["floor: the two together", "6.80 s", "", "", ""]);
      expect(big!.note).toMatch(/^Batched only .* Floor: converge sends no read before the stack has validated/);
      // Without both figures (an older results file), no floor and no note.
      const [plain] = scaleSections([{ ...noop, validateMs: undefined }]);
      expect(plain!.rows).toHaveLength(1);
      expect(plain!.note).toBeUndefined();
    },
  );

  it(
    "quota: a write quota against P/Q; a request quota against 2P/Q " +
      "(P/Q for reference); a failed apply is not met",
    () => {
      const run: QuotaRun = {
        kind: "write",
        quotaKey: "gkebackup.write",
        perMinute: 600,
        p: 220,
        rate: "gkebackup.write=600/min",
        calls: 220,
        boundMs: 22_000,
        wallMs: 25_000,
        exitCode: 0,
        ok: true,
        summary: "",
        reads: 220,
        writes: 220,
        exhausted: 0,
        notOkByStatus: {},
        reported429: 0,
        loadAvg1: 1,
      };
      expect(quotaVerdicts(run).map((v) => [v.figure, v.met])).toEqual([
        ["1.14x", true],
        ["0 of 0", true],
        ["0", true],
      ]);
      const request = {
        ...run,
        kind: "request" as const,
        quotaKey: "gkebackup",
        perMinute: 1_200,
        calls: 440,
        boundMs: 22_000,
      };
      expect(quotaVerdicts(request).map((v) => [v.figure, v.met])).toEqual([
        ["1.14x", true],
        ["2.27x", undefined],
        ["0 of 0", true],
        ["0", true],
      ]);
      const [writeSection, requestSection] = quotaSections([run, request]);
      expect(overall(writeSection!.verdicts)).toBe(true);
      expect(overall(requestSection!.verdicts)).toBe(true);
      expect(overall(quotaSections([{ ...run, wallMs: 26_000 }])[0]!.verdicts)).toBe(false);
      expect(quotaVerdicts({ ...run, ok: false, exitCode: 1 }).at(-1)!.met).toBe(false);
    },
  );

  it("every section is there even when nothing was run", () => {
    const sections = issue20Sections({ results: [] });
    expect(sections).toHaveLength(7);
    expect(sections.every((s) => overall(s.verdicts) === undefined)).toBe(true);
  });
});

describe("growth", () => {
  const p = (scenario: string, n: number, wallMs: number, cpuMs = wallMs, maxRssMB = 100) => ({
    scenario,
    n,
    wallMs,
    cpuMs,
    maxRssMB,
  });

  it("each N against the previous N of the same scenario, in the given order of scenarios", () => {
    const rows = growthRows(
      [
        p("noop-plan", 10_000, 2_000, 3_000, 200),
        p("cold-apply", 1_000, 700),
        p("noop-plan", 1_000, 500, 600, 100),
        p("noop-plan", 100_000, 30_000, 33_000, 1_000),
        p("cold-apply", 10_000, 2_900),
      ],
      ["cold-apply", "noop-plan"],
    );
    expect(rows.map((r) => [r.scenario, r.n])).toEqual([
      ["cold-apply", 1_000],
      ["cold-apply", 10_000],
      ["noop-plan", 1_000],
      ["noop-plan", 10_000],
      ["noop-plan", 100_000],
    ]);
    expect(rows[0]!.wallRatio).toBeUndefined();
    expect(rows[3]).toMatchObject({ previousN: 1_000, nRatio: 10, wallRatio: 4, cpuRatio: 5, rssRatio: 2 });
    expect(rows[4]).toMatchObject({ previousN: 10_000, nRatio: 10, wallRatio: 15, rssRatio: 5 });
  });

  it("a scenario measured at one N only shows no growth", () => {
    expect(
      growthRows([p("cold-plan", 1_000, 500), p("noop-plan", 1_000, 500), p("noop-plan", 10_000, 5_000)]),
    ).toHaveLength(2);
  });

  it("the exponent: 1 for linear, 2 for quadratic growth", () => {
    const [, linear] = growthRows([p("a", 1_000, 100), p("a", 10_000, 1_000)]);
    expect(growthExponent(linear!, "wallRatio")).toBeCloseTo(1);
    const [, quadratic] = growthRows([p("a", 1_000, 100), p("a", 10_000, 10_000)]);
    expect(growthExponent(quadratic!, "wallRatio")).toBeCloseTo(2);
    expect(growthExponent({ ...quadratic!, nRatio: undefined }, "wallRatio")).toBeUndefined();
  });

  it("growth reads the batched L = 0 results only", () => {
    const rows = growth([
      { scenario: "noop-plan", n: 1_000, latencyMs: 0, batching: true, wallMs: 500, cpuMs: 600, maxRssMB: 100 },
      { scenario: "noop-plan", n: 10_000, latencyMs: 0, batching: true, wallMs: 2_000, cpuMs: 2_400, maxRssMB: 170 },
      { scenario: "noop-plan", n: 10_000, latencyMs: 20, batching: true, wallMs: 9_000, cpuMs: 2_400, maxRssMB: 170 },
      { scenario: "noop-plan", n: 10_000, latencyMs: 0, batching: false, wallMs: 9_000, cpuMs: 2_400, maxRssMB: 170 },
    ] as ScenarioResult[]);
    expect(rows.map((r) => r.wallMs)).toEqual([500, 2_000]);
  });
});

describe("the quota world", () => {
  it("P restore plans (one service), one binding each: a stack that loads cleanly and a seed with P objects", () => {
    const shape = quotaShape(30);
    const r = parseStack("/virtual/quota.yaml", stackYaml(shape, false));
    expect(r.diagnostics).toEqual([]);
    const resources = [...r.stack!.resources.values()];
    expect(resources).toHaveLength(30);
    expect(new Set(resources.map((d) => d.type))).toEqual(new Set(["cloudnative:backup/v1:RestorePlanIamBinding"]));
    expect(seedYaml(shape).match(/^ {2}- name: .*restorePlans/gm)).toHaveLength(30);
    expect(seedYaml(shape)).toMatch(/^endpoints: \[\]$/m);
  });
});
