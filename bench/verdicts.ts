// Issue 20's targets checked against a results file: one section per target, each a small table
// of the figures it rests on and its verdicts (met / not met, the figure and the target). Pure:
// rendered by bench/report.ts, tested in test/bench/verdicts.test.ts.
import type { OverlapResult, QuotaRun, StartupResult } from "./extras.js";
import type { ScenarioResult } from "./scenarios.js";
import {
  atMost,
  differenceOfMedians,
  growthRows,
  ISSUE20,
  median,
  ratioOfMedians,
  type GrowthRow,
  type Verdict,
} from "./targets.js";

export interface Section {
  title: string;
  head: string[];
  rows: string[][];
  verdicts: Verdict[];
  /** A line under the table (what the bound is, how the figures were taken) */
  note?: string;
}

/** What the verdicts read from a results file (BenchResults has all of it). */
export interface Measured {
  results: ScenarioResult[];
  startup?: StartupResult;
  overlap?: OverlapResult;
  /** Issue 45: the no-op plan at 100 ms (runOverlap on N = 10,000) */
  far?: OverlapResult;
  quota?: QuotaRun[];
  failures?: { part: string; message: string }[];
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const x = (r: number) => `${r.toFixed(2)}x`;
const mb = (v: number) => `${v.toFixed(0)} MB`;
const num = (n: number) => n.toLocaleString("en-US");
const spread = (xs: number[]) => [s(median(xs)), s(Math.min(...xs)), s(Math.max(...xs))];

export function startupSections(st: StartupResult | undefined): Section[] {
  const head = ["command", "median", "min", "max"];
  const version = {
    title: "Start-up: `converge --version` ≤ 2x `node -e 0`",
    head,
    rows: [] as string[][],
    verdicts: [] as Verdict[],
  };
  const validate = {
    title: `Start-up: \`validate\` of ${num(ISSUE20.validateN)} resources ≤ 0.25 s beyond start-up`,
    head,
    rows: [] as string[][],
    verdicts: [] as Verdict[],
  };
  const ratio = st ? ratioOfMedians({ a: st.versionMs, b: st.nodeMs }) : undefined;
  const beyond = st ? differenceOfMedians({ a: st.validateMs, b: st.versionMs }) : undefined;
  version.verdicts.push(atMost("median `converge --version` / median `node -e 0`", ratio, ISSUE20.versionRatio, x));
  validate.verdicts.push(
    atMost(
      `median \`validate\` (N = ${num(ISSUE20.validateN)}) − median \`--version\``,
      beyond,
      ISSUE20.validateBeyondMs,
      s,
    ),
  );
  if (st) {
    version.rows.push(["`node -e 0`", ...spread(st.nodeMs)], ["`converge --version`", ...spread(st.versionMs)]);
    validate.rows.push(
      [`\`converge validate -f stack.yaml\` (N = ${num(st.validateN)})`, ...spread(st.validateMs)],
      ["`converge --version`", ...spread(st.versionMs)],
    );
    const note =
      `${st.pairs} rounds, the three commands in turn (order reversed every ` +
      `other round), wall time from spawn to exit, no probe.`;
    return [
      { ...version, note },
      { ...validate, note },
    ];
  }
  return [version, validate];
}

export function overlapSection(o: OverlapResult | undefined): Section {
  const title =
    `Overlap: no-op plan of ${num(ISSUE20.overlapN)} resources at ${ISSUE20.overlapLatencyMs} ms, ` +
    `(plan − validate) ≤ ${ISSUE20.overlapRatio.toFixed(2)}x the bound`;
  const head = ["measure", "median", "min", "max"];
  if (!o)
    return {
      title,
      head,
      rows: [],
      verdicts: [atMost("(plan − validate) / bound", undefined, ISSUE20.overlapRatio, x)],
    };
  const beyond = differenceOfMedians({ a: o.planMs, b: o.validateMs });
  const rows = [
    ["`converge plan` (no-op)", ...spread(o.planMs)],
    ["`converge validate`", ...spread(o.validateMs)],
    ["refresh span (first read sent → last answered)", ...spread(o.refreshSpanMs)],
    ["plan − validate (medians)", s(beyond), "", ""],
  ];
  const floor = o.floorMs?.length ? median(o.floorMs) : undefined;
  if (floor !== undefined) rows.push(["calibration: the same reads from a bare HTTP loop", ...spread(o.floorMs!)]);
  return {
    title,
    head,
    rows,
    verdicts: [atMost(`(plan − validate) / bound (${s(o.boundMs)})`, beyond / o.boundMs, ISSUE20.overlapRatio, x)],
    note:
      `Bound: ceil(P / ${o.parallelism}) × ${o.latencyMs} ms with the generator's P = ${num(o.p)} policies ` +
      `for N = ${num(o.n)} (the issue's 200 would give ${s(Math.ceil(200 / o.parallelism) * o.latencyMs)}); ` +
      `${o.planMs.length} pairs, ${num(o.reads)} reads in the last plan.` +
      (floor !== undefined
        ? ` The bare loop's span is ${x(floor / o.boundMs)} the bound: the refresh alone cannot come nearer on ` +
          "this machine, and converge starts no read before the stack has loaded without errors (bad input: no " +
          "network call), so plan − validate holds the whole refresh."
        : ""),
  };
}

const find = (results: ScenarioResult[], n: number, scenario: string) =>
  results.find((r) => r.batching && r.latencyMs === 0 && r.n === n && r.scenario === scenario);
const scenarioRow = (r: ScenarioResult) => [r.scenario, s(r.wallMs), s(r.cpuMs), mb(r.maxRssMB), `${r.runs.length}`];

/** validate + the bare loop's reads of a no-op plan's run, when both were measured. */
const floorOf = (r: ScenarioResult) =>
  r.validateMs !== undefined && r.floorMs !== undefined ? r.validateMs + r.floorMs : undefined;

/** Rows under a no-op plan's: `validate` of its stack, its reads from a bare HTTP loop, their sum. */
function floorRows(r: ScenarioResult): string[][] {
  const floor = floorOf(r);
  if (floor === undefined) return [];
  const row = (what: string, ms: number) => [what, s(ms), "", "", ""];
  return [
    row("`converge validate` of the same stack", r.validateMs!),
    row(`the same ${num(r.p)} reads from a bare HTTP loop`, r.floorMs!),
    row("floor: the two together", floor),
  ];
}

/** What a no-op plan's floor means, when it was measured. */
function floorNote(r: ScenarioResult): string | undefined {
  const floor = floorOf(r);
  if (floor === undefined) return undefined;
  return (
    `Floor: converge sends no read before the stack has validated (bad input: no network call), and the bare ` +
    `loop (the CLI's node:http client in a fresh process with nothing else to do) is what the same reads at ` +
    `the same parallelism cost a client here, so a no-op plan takes at least ${s(floor)} here (` +
    `${Math.round((100 * floor) / r.wallMs)}% of its median wall time) before it reads its state or plans ` +
    `anything.`
  );
}

/** A figure not measured because its part failed: not met, with the reason. */
const failedOr = (v: Verdict, failure: string | undefined): Verdict =>
  v.met === undefined && failure ? { ...v, figure: `failed: ${failure.split("\n")[0]!.slice(0, 200)}`, met: false } : v;

export function scaleSections(results: ScenarioResult[], failure?: string): Section[] {
  const head = ["scenario", "wall", "CPU", "peak RSS", "runs"];
  const { mid, scale } = ISSUE20;
  const m = find(results, mid.n, "noop-plan");
  const noop = find(results, scale.n, "noop-plan");
  const cold = find(results, scale.n, "cold-apply");
  const midFloor = m && floorNote(m);
  const scaleFloor = noop && floorNote(noop);
  return [
    {
      title: `N = ${num(mid.n)}, L = 0: no-op plan ≤ 1.0 s and ≤ 200 MB`,
      head,
      rows: m ? [scenarioRow(m), ...floorRows(m)] : [],
      verdicts: [
        atMost("no-op plan: wall (median)", m?.wallMs, mid.noopPlanMs, s),
        atMost("no-op plan: peak RSS (max)", m?.maxRssMB, mid.noopPlanRssMB, mb),
      ],
      ...(midFloor ? { note: midFloor } : {}),
    },
    {
      title: `N = ${num(scale.n)}, L = 0: no-op plan ≤ 10 s and ≤ 1 GB; cold apply ≤ 30 s`,
      head,
      rows: [...[cold, noop].filter((r) => r !== undefined).map(scenarioRow), ...(noop ? floorRows(noop) : [])],
      verdicts: [
        atMost("no-op plan: wall (median)", noop?.wallMs, scale.noopPlanMs, s),
        atMost("no-op plan: peak RSS (max)", noop?.maxRssMB, scale.noopPlanRssMB, mb),
        atMost("cold apply: wall", cold?.wallMs, scale.coldApplyMs, s),
      ].map((v) => failedOr(v, failure)),
      ...((noop ?? cold)
        ? {
            note:
              `Batched only (\`--scale\`): the cold apply once (each needs a fresh world), then the no-op ` +
              `plan ${scale.noopPlanRuns} times (median wall, max RSS); P = ${num((noop ?? cold)!.p)} policies.` +
              `${scaleFloor ? ` ${scaleFloor}` : ""}`,
          }
        : {}),
    },
  ];
}

/** Verdicts of one quota run: wall ≤ 1.15 × calls/Q and no failure. For a request quota (reads
 *  counted, 2P calls) the issue's literal P/Q is shown for reference: it cannot hold there. */
export function quotaVerdicts(q: QuotaRun): Verdict[] {
  const who = `${q.quotaKey} = ${q.perMinute}/min, ${q.rate ? `\`--rate ${q.rate}\`` : "default rates"}`;
  const pq = (q.p / q.perMinute) * 60_000;
  const out = [
    atMost(
      `${who}: wall / (${q.calls === q.p ? "" : `${q.calls / q.p}`}P/Q = ${s(q.boundMs)})`,
      q.wallMs / q.boundMs,
      ISSUE20.quotaRatio,
      x,
    ),
  ];
  if (q.calls !== q.p)
    out.push({
      target: `${who}: wall / (P/Q = ${s(pq)}), the issue's literal bound, for reference`,
      figure: x(q.wallMs / pq),
      limit: `≤ ${x(ISSUE20.quotaRatio)}`,
      met: undefined,
    });
  const reported = q.reported429;
  out.push({
    target: `${who}: 429s reported`,
    figure: reported === undefined ? "not recorded" : `${num(reported)} of ${num(q.exhausted)}`,
    limit: "every one",
    met: reported === undefined ? undefined : reported === q.exhausted,
  });
  out.push({
    target: `${who}: failures`,
    figure: q.ok ? "0" : `exit ${q.exitCode}: ${q.summary || "no summary"}`,
    limit: "0",
    met: q.ok,
  });
  return out;
}

const QUOTA_HEAD = ["quota (emulator)", "CLI rate", "P", "requests counted", "bound", "wall", "wall / bound", "429s"];
QUOTA_HEAD.push("429s reported", "reads", "writes", "failures");

const reportedCell = (q: QuotaRun) => (q.reported429 === undefined ? "—" : num(q.reported429));

function quotaRow(q: QuotaRun): string[] {
  const rate = q.rate ? `\`--rate ${q.rate}\`` : "defaults (unlimited on the emulator, adaptive)";
  const wall = [s(q.boundMs), s(q.wallMs), x(q.wallMs / q.boundMs)];
  const calls = [num(q.exhausted), reportedCell(q), num(q.reads), num(q.writes), q.ok ? "0" : "**1**"];
  return [`${q.quotaKey} = ${num(q.perMinute)}/min`, rate, num(q.p), num(q.calls), ...wall, ...calls];
}

/** Two sections: the issue's target (a write quota: P/Q), and a request quota that also counts
 *  the plan's reads (2P/Q; beyond the issue's wording). */
export function quotaSections(runs: QuotaRun[] | undefined): Section[] {
  const r = ISSUE20.quotaRatio.toFixed(2);
  const write = (runs ?? []).filter((q) => q.kind === "write");
  const request = (runs ?? []).filter((q) => q.kind === "request");
  const section = (title: string, mine: QuotaRun[], note: string): Section => ({
    title,
    head: QUOTA_HEAD,
    rows: mine.map(quotaRow),
    verdicts: mine.length ? mine.flatMap(quotaVerdicts) : [atMost("wall / bound", undefined, ISSUE20.quotaRatio, x)],
    ...(mine.length ? { note } : {}),
  });
  return [
    section(
      `Quota on writes: cold apply of P policies under a write quota Q a minute ≤ ${r}x P/Q, ` +
        "0 failures, 429s reported",
      write,
      "`service.write` counts setIamPolicy calls only: P of them. One run each, " +
        "with `--rate` at the quota and with the CLI's defaults.",
    ),
    section(
      `Quota on requests (reads counted): the same apply under a request quota Q ≤ ${r}x 2P/Q, 0 failures`,
      request,
      "`service` counts every request: the plan's P reads and the P writes, so the bound is 2P/Q (the quota " +
        "is set to twice the write quota, so both bounds are as long). The issue's P/Q cannot hold here; it is " +
        "shown for reference. One run each.",
    ),
  ];
}

export function issue20Sections(m: Measured): Section[] {
  return [
    ...startupSections(m.startup),
    overlapSection(m.overlap),
    ...scaleSections(m.results, m.failures?.find((f) => f.part === "scale")?.message),
    ...quotaSections(m.quota),
  ];
}

/** The growth of the batched L = 0 scenarios from one N to the next. */
export function growth(results: ScenarioResult[]): GrowthRow[] {
  const points = results
    .filter((r) => r.batching && r.latencyMs === 0)
    .map((r) => ({ scenario: r.scenario, n: r.n, wallMs: r.wallMs, cpuMs: r.cpuMs, maxRssMB: r.maxRssMB }));
  return growthRows(points, ["cold-plan", "cold-apply", "noop-plan", "changed-plan", "changed-apply"]);
}
