// Issue 20's targets and the pure arithmetic behind their verdicts: network and quota bounds,
// ratios of medians of paired runs, growth from one N to the next. No I/O here (tested in
// test/bench/targets.test.ts); bench/extras.ts measures, bench/report.ts renders.

/** The targets of issue 20 ("Performance at the limit"), on this 2-core machine. */
export const ISSUE20 = {
  /** `converge --version` ≤ 2x `node -e 0` (ratio of medians of paired runs) */
  versionRatio: 2,
  /** `validate` of 2,000 resources ≤ 0.25 s beyond start-up (median validate − median --version) */
  validateN: 2_000,
  validateBeyondMs: 250,
  /** No-op plan of 2,000 resources at 20 ms: (plan − validate) ≤ 1.10x the network bound */
  overlapN: 2_000,
  overlapLatencyMs: 20,
  overlapRatio: 1.1,
  /** N = 10,000, L = 0: no-op plan ≤ 1.0 s and ≤ 200 MB */
  mid: { n: 10_000, noopPlanMs: 1_000, noopPlanRssMB: 200 },
  /** N = 100,000, L = 0: no-op plan ≤ 10 s and ≤ 1 GB; cold apply ≤ 30 s */
  scale: { n: 100_000, noopPlanMs: 10_000, noopPlanRssMB: 1_024, coldApplyMs: 30_000, noopPlanRuns: 3 },
  /** Under a quota Q a minute on the written service: cold apply of P policies ≤ 1.15x P/Q, 0 failures */
  quotaRatio: 1.15,
} as const;

export function median(xs: readonly number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The network lower bound of one round of calls: ceil(calls / parallelism) x L. */
export function roundBoundMs(calls: number, parallelism: number, latencyMs: number): number {
  return Math.ceil(calls / parallelism) * latencyMs;
}

/** The quota bound: `calls` requests at `perMinute` a minute take calls / perMinute minutes. */
export function quotaBoundMs(calls: number, perMinute: number): number {
  return (calls / perMinute) * 60_000;
}

/** Wall-clock samples of one command, paired run by run with another's. */
export interface Paired {
  a: number[];
  b: number[];
}

/** median(a) / median(b): how many times slower a is than b. */
export const ratioOfMedians = (p: Paired): number => median(p.a) / median(p.b);
/** median(a) − median(b): what a costs beyond b. */
export const differenceOfMedians = (p: Paired): number => median(p.a) - median(p.b);

export interface Verdict {
  /** What is measured, e.g. "`converge --version` / `node -e 0`" */
  target: string;
  /** The figure, formatted ("1.83x", "0.21 s"), or "not run" */
  figure: string;
  /** The target, formatted ("≤ 2.00x") */
  limit: string;
  /** undefined: not run, or for reference only */
  met: boolean | undefined;
}

/** A verdict on `value` ≤ `limit`; `format` writes both. undefined value: not run. */
export function atMost(
  target: string,
  value: number | undefined,
  limit: number,
  format: (v: number) => string,
): Verdict {
  if (value === undefined || !Number.isFinite(value))
    return { target, figure: "not run", limit: `≤ ${format(limit)}`, met: undefined };
  return { target, figure: format(value), limit: `≤ ${format(limit)}`, met: value <= limit };
}

/** All met: true; any not met: false; nothing measured: undefined. */
export function overall(verdicts: readonly Verdict[]): boolean | undefined {
  const known = verdicts.filter((v) => v.met !== undefined);
  if (!known.length) return undefined;
  return known.every((v) => v.met);
}

/** One measured point of a scenario, for the growth table. */
export interface GrowthPoint {
  scenario: string;
  n: number;
  wallMs: number;
  cpuMs: number;
  maxRssMB: number;
}

export interface GrowthRow extends GrowthPoint {
  /** Ratios to the previous (smaller) N of the same scenario, and that N's factor */
  previousN?: number;
  nRatio?: number;
  wallRatio?: number;
  cpuRatio?: number;
  rssRatio?: number;
}

/** Per scenario (in first-seen order), its points by increasing N, each with the ratio to the
 *  one before. Scenarios seen at one N only are left out: they show no growth. */
export function growthRows(points: readonly GrowthPoint[], order: readonly string[] = []): GrowthRow[] {
  const scenarios = [
    ...new Set([...order.filter((s) => points.some((p) => p.scenario === s)), ...points.map((p) => p.scenario)]),
  ];
  const rows: GrowthRow[] = [];
  for (const scenario of scenarios) {
    const mine = points.filter((p) => p.scenario === scenario).sort((a, b) => a.n - b.n);
    if (new Set(mine.map((p) => p.n)).size < 2) continue;
    mine.forEach((p, i) => {
      const prev = mine[i - 1];
      if (!prev || prev.n === p.n) return void rows.push({ ...p });
      rows.push({
        ...p,
        previousN: prev.n,
        nRatio: p.n / prev.n,
        wallRatio: p.wallMs / prev.wallMs,
        cpuRatio: p.cpuMs / prev.cpuMs,
        rssRatio: p.maxRssMB / prev.maxRssMB,
      });
    });
  }
  return rows;
}

/** Growth exponent between two points: k in time ∝ N^k (1 = linear, 2 = quadratic). */
export function growthExponent(row: GrowthRow, of: "wallRatio" | "cpuRatio" | "rssRatio"): number | undefined {
  const r = row[of];
  if (r === undefined || row.nRatio === undefined || row.nRatio <= 1 || !(r > 0)) return undefined;
  return Math.log(r) / Math.log(row.nRatio);
}

/** The targets of issue 45 ("Validation at the speed of parsing, plans at the speed of the wire"),
 *  on this 2-core machine, measured side by side in one run. */
export const ISSUE45 = {
  /** `validate` beyond `converge --version` (median − median), by N */
  validateBeyondMs: [
    { n: 2_000, ms: 100 },
    { n: 10_000, ms: 300 },
  ],
  /** No-op plan at L = 0 */
  mid: { n: 10_000, noopPlanMs: 1_000, noopPlanRssMB: 200 },
  scale: { n: 100_000, noopPlanMs: 6_000, noopPlanRssMB: 1_024 },
  /** No-op plan of 2,000 resources at 20 ms: (plan − validate) ≤ 1.10x the bare loop's same reads */
  overlapVsLoop: 1.1,
  /** At 100 ms, N = 10,000 (1,200 policies): no-op plan ≤ 1.05x (network bound + validate) */
  far: { n: 10_000, latencyMs: 100, ratio: 1.05 },
} as const;
