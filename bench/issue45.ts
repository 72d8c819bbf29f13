// Issue 45's targets side by side, from one results file: validate beyond start-up at 2,000 and
// 10,000 resources, the no-op plan at 10,000 and 100,000, the overlap against a bare HTTP loop's
// same reads in the same run, and a no-op plan at 100 ms against the network bound plus validate.
// Pure: rendered by bench/report.ts, tested in test/bench/issue45.test.ts.
import type { OverlapResult } from "./extras.js";
import { atMost, differenceOfMedians, ISSUE45, median, type Verdict } from "./targets.js";
import type { Measured, Section } from "./verdicts.js";

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const x = (r: number) => `${r.toFixed(2)}x`;
const mb = (v: number) => `${v.toFixed(0)} MB`;
const num = (n: number) => n.toLocaleString("en-US");

/** The median `validate` of N resources in the start-up rounds, when it was run. */
function validateOf(m: Measured, n: number): number[] | undefined {
  const st = m.startup;
  if (!st) return undefined;
  if (st.validateN === n) return st.validateMs;
  return st.large?.n === n ? st.large.validateMs : undefined;
}

function validateVerdicts(m: Measured): Verdict[] {
  return ISSUE45.validateBeyondMs.map(({ n, ms }) => {
    const v = validateOf(m, n);
    const beyond = v && m.startup ? differenceOfMedians({ a: v, b: m.startup.versionMs }) : undefined;
    return atMost(`\`validate\` of ${num(n)} resources beyond \`--version\``, beyond, ms, s);
  });
}

function planVerdicts(m: Measured): Verdict[] {
  const out: Verdict[] = [];
  for (const t of [ISSUE45.mid, ISSUE45.scale]) {
    const r = m.results.find((x) => x.batching && x.latencyMs === 0 && x.n === t.n && x.scenario === "noop-plan");
    out.push(atMost(`no-op plan, N = ${num(t.n)}, L = 0: wall (median)`, r?.wallMs, t.noopPlanMs, s));
    out.push(atMost(`no-op plan, N = ${num(t.n)}, L = 0: peak RSS`, r?.maxRssMB, t.noopPlanRssMB, mb));
  }
  return out;
}

/** (plan − validate) over the bare loop's span of the same reads (medians, same run). */
function overlapVerdict(o: OverlapResult | undefined): Verdict {
  const target = `no-op plan of ${num(o?.n ?? 2_000)} at ${o?.latencyMs ?? 20} ms: (plan − validate) / bare loop`;
  const loop = o?.floorMs?.length ? median(o.floorMs) : undefined;
  const ratio = o && loop ? differenceOfMedians({ a: o.planMs, b: o.validateMs }) / loop : undefined;
  return atMost(target, ratio, ISSUE45.overlapVsLoop, x);
}

/** A no-op plan at 100 ms over (its network bound + its validate), medians. */
function farVerdict(o: OverlapResult | undefined): Verdict {
  const { n, latencyMs, ratio } = ISSUE45.far;
  const target =
    `no-op plan of ${num(o?.n ?? n)} (${num(o?.p ?? 1_200)} ` + `policies) at ${latencyMs} ms / (bound + validate)`;
  const figure = o ? median(o.planMs) / (o.boundMs + median(o.validateMs)) : undefined;
  return atMost(target, figure, ratio, x);
}

function farRows(o: OverlapResult | undefined): string[][] {
  if (!o) return [];
  return [
    [`no-op plan at ${o.latencyMs} ms (median)`, s(median(o.planMs)), ""],
    ["network bound: ceil(P / parallelism) × L", s(o.boundMs), ""],
    ["`validate` of the same stack (median)", s(median(o.validateMs)), ""],
    ...(o.floorMs?.length ? [["the same reads from a bare HTTP loop (median)", s(median(o.floorMs)), ""]] : []),
  ];
}

/** One section: every target of issue 45 with its figure, the rows the far target rests on. */
export function issue45Section(m: Measured): Section {
  const verdicts = [...validateVerdicts(m), ...planVerdicts(m), overlapVerdict(m.overlap), farVerdict(m.far)];
  const note =
    "All figures from this one run. Validate: median of the start-up rounds minus median `--version`. " +
    "Overlap: the bare loop is the same reads from the CLI's node:http client in a fresh process, once per pair. " +
    "Far: one pair of validate and no-op plan at 100 ms after a set-up apply at L = 0.";
  return {
    title: "Issue 45: targets side by side",
    head: ["measure", "figure", ""],
    rows: farRows(m.far),
    verdicts,
    note,
  };
}
