// Results file and tables (Markdown, printed and written into docs/BENCHMARKS.md).
import { readFileSync, writeFileSync } from "node:fs";
import type { OverlapResult, QuotaRun, StartupResult } from "./extras.js";
import type { ScenarioResult } from "./scenarios.js";
import type { PageResult } from "./page.js";
import { growthExponent, overall, type GrowthRow } from "./targets.js";
import { issue45Section } from "./issue45.js";
import { growth, issue20Sections, type Section } from "./verdicts.js";

const verdictWord = (v: { met?: boolean; figure: string }) =>
  v.met === undefined ? (v.figure === "not run" ? "not run" : "for reference") : v.met ? "**met**" : "**not met**";
const readsWrites = (q: { requests: { reads: number; writes: number } }) =>
  `${q.requests.reads}r/${q.requests.writes}w`;

export interface Machine {
  cpus: { model: string; speedMHz: number }[];
  cpuCount: number;
  totalMemoryMB: number;
  platform: string;
  release: string;
  arch: string;
  node: string;
  gnuTime: boolean;
  /** bench/calibrate.mjs's median time (ms) before and after the run: how fast the machine was
   *  (absent from results written before session 12) */
  calibrationMs?: { before: number; after: number };
}

export interface BenchResults {
  /** quick | full | custom */
  mode: string;
  date: string;
  command: string;
  machine: Machine;
  options: Record<string, unknown>;
  durationMs: number;
  /** Wall time of each part of the run (matrix, extras), to estimate a full run */
  partMs?: Record<string, number>;
  results: ScenarioResult[];
  /** Issue 20's scenarios (bench/extras.ts), when run */
  startup?: StartupResult;
  overlap?: OverlapResult;
  far?: OverlapResult;
  quota?: QuotaRun[];
  /** The review page of a 10,000-resource cold plan (bench/page.ts), when run */
  page?: PageResult;
  /** Parts that failed without stopping the run (the scale run) */
  failures?: Failure[];
}

export interface Failure {
  part: string;
  message: string;
}

/** Issue 7's targets, checked against the results (N = 10,000, parallelism 10). */
export const TARGETS = {
  n: 10_000,
  noopPlanMs: 3_000,
  noopPlanRssMB: 400,
  coldApplyMs: 10_000,
  latencyMs: 20,
  phaseRatio: 1.25,
};

const s = (ms: number) => (ms / 1000).toFixed(2);
const x = (r: number | undefined) => (r === undefined || !Number.isFinite(r) ? "–" : `${r.toFixed(2)}x`);
const mode = (r: ScenarioResult) => (r.batching ? "batched" : "per-resource");
const num = (n: number) => n.toLocaleString("en-US");

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [
    line(head),
    line(
      head.map((h) =>
        new RegExp(
          String.raw`^(N|L|wall|CPU|peak|reads|writes|retries|bound|lower|requests|ratio|wall \/|refresh|writ` +
            String.raw`e|value|limit|median|min|max|P$|429s|failures|runs|N ×|× )`,
        ).test(h)
          ? "---:"
          : "---",
      ),
    ),
    ...rows.map(line),
  ].join("\n");
}

export function resultsTable(results: ScenarioResult[]): string {
  const rows = results.map((r) => {
    const phase = (k: "refresh" | "write") => {
      const p = r.phases.find((q) => q.kind === k);
      if (!p) return "–";
      return r.latencyMs > 0 ? `${s(p.spanMs)} (${x(p.ratio)})` : s(p.spanMs);
    };
    return [
      num(r.n),
      String(r.latencyMs),
      mode(r),
      r.scenario,
      s(r.wallMs),
      s(r.cpuMs),
      r.maxRssMB.toFixed(0),
      num(r.requests.reads),
      num(r.requests.writes),
      num(r.requests.retries),
      r.latencyMs > 0 ? s(r.boundMs) : "0",
      r.latencyMs > 0 ? x(r.wallMs / r.boundMs) : "–",
      phase("refresh"),
      phase("write"),
    ];
  });
  return table(
    [
      "N",
      "L ms",
      "mode",
      "scenario",
      "wall s",
      "CPU s",
      "peak RSS MB",
      "reads",
      "writes",
      "retries",
      "bound s",
      "wall / bound",
      "refresh span s (/ bound)",
      "write span s (/ bound)",
    ],
    rows,
  );
}

export function batchingTable(results: ScenarioResult[]): string {
  const rows: string[][] = [];
  for (const on of results.filter((r) => r.batching)) {
    const off = results.find(
      (r) => !r.batching && r.n === on.n && r.latencyMs === on.latencyMs && r.scenario === on.scenario,
    );
    if (!off) continue;
    const reqOn = on.requests.reads + on.requests.writes + on.requests.other;
    const reqOff = off.requests.reads + off.requests.writes + off.requests.other;
    rows.push([
      num(on.n),
      String(on.latencyMs),
      on.scenario,
      num(reqOn),
      num(reqOff),
      reqOn ? x(reqOff / reqOn) : "–",
      s(on.wallMs),
      s(off.wallMs),
      x(off.wallMs / on.wallMs),
    ]);
  }
  return table(
    [
      "N",
      "L ms",
      "scenario",
      "requests batched",
      "requests per-resource",
      "requests ratio",
      "wall batched s",
      "wall per-resource s",
      "wall ratio",
    ],
    rows,
  );
}

export interface TargetCheck {
  target: string;
  value: string;
  limit: string;
  ok: boolean | undefined;
}

export function checkTargets(results: ScenarioResult[]): TargetCheck[] {
  const find = (n: number, l: number, sc: string) =>
    results.find((r) => r.batching && r.n === n && r.latencyMs === l && r.scenario === sc);
  const out: TargetCheck[] = [];
  const t = TARGETS;
  const noop = find(t.n, 0, "noop-plan");
  out.push({
    target: `no-op plan, N=${num(t.n)}, L=0: wall`,
    value: noop ? `${s(noop.wallMs)} s` : "not run",
    limit: `≤ ${s(t.noopPlanMs)} s`,
    ok: noop && noop.wallMs <= t.noopPlanMs,
  });
  out.push({
    target: `no-op plan, N=${num(t.n)}, L=0: peak RSS`,
    value: noop ? `${noop.maxRssMB.toFixed(0)} MB` : "not run",
    limit: `≤ ${t.noopPlanRssMB} MB`,
    ok: noop && noop.maxRssMB <= t.noopPlanRssMB,
  });
  const cold = find(t.n, 0, "cold-apply");
  out.push({
    target: `cold apply, N=${num(t.n)}, L=0: wall`,
    value: cold ? `${s(cold.wallMs)} s` : "not run",
    limit: `≤ ${s(t.coldApplyMs)} s`,
    ok: cold && cold.wallMs <= t.coldApplyMs,
  });
  // L = 20 ms: every phase of every batched run (any N) within 1.25x of its network lower bound.
  for (const r of results.filter((q) => q.batching && q.latencyMs === t.latencyMs)) {
    for (const p of r.phases) {
      out.push({
        target: `${r.scenario} ${p.kind} phase, N=${num(r.n)}, L=${t.latencyMs} ms`,
        value: `${s(p.spanMs)} s (${x(p.ratio)})`,
        limit: `≤ ${t.phaseRatio}x ${s(p.boundMs)} s`,
        ok: p.ratio !== undefined && p.ratio <= t.phaseRatio,
      });
    }
  }
  for (const r of results.filter(
    (q) => q.batching && q.latencyMs === t.latencyMs && q.scenario === "noop-plan" && q.floorMs !== undefined,
  )) {
    const b = r.rounds[0]!.boundMs;
    out.push({
      target: `(calibration) bare HTTP loop, ${num(r.p)} reads, N=${num(r.n)}, L=${t.latencyMs} ms`,
      value: `${s(r.floorMs!)} s (${x(r.floorMs! / b)})`,
      limit: `for reference: ${s(b)} s`,
      ok: undefined,
    });
  }
  if (!results.some((q) => q.batching && q.latencyMs === t.latencyMs))
    out.push({
      target: `phases within ${t.phaseRatio}x of the bound, L=${t.latencyMs} ms`,
      value: "not run",
      limit: "",
      ok: undefined,
    });
  // Requests: refresh = P reads, apply = P reads + P writes (retries reported separately).
  const batched = results.filter((q) => q.batching);
  const bad = batched.filter(
    (q) =>
      q.requests.reads - q.requests.retries > q.expected.reads ||
      q.requests.writes - q.requests.retries > q.expected.writes ||
      q.requests.reads < q.expected.reads ||
      q.requests.writes < q.expected.writes,
  );
  const retries = batched.reduce((a, q) => a + q.requests.retries, 0);
  out.push({
    target: "requests (batched): refresh = P reads, apply = P reads + P writes",
    value: bad.length
      ? `differs in ${bad.map((q) => `N=${q.n} L=${q.latencyMs} ${q.scenario}: ${readsWrites(q)}`).join("; ")}`
      : `as expected in all ${batched.length} runs; ${retries} retries`,
    limit: "exact",
    ok: batched.length ? bad.length === 0 : undefined,
  });
  return out;
}

export function targetsTable(checks: TargetCheck[]): string {
  return table(
    ["target", "value", "limit", "holds"],
    checks.map((c) => [
      c.target,
      c.value,
      c.limit,
      c.ok === undefined ? (c.value === "not run" ? "n/a" : "–") : c.ok ? "yes" : "**no**",
    ]),
  );
}

export function machineLine(m: Machine): string {
  const models = [...new Set(m.cpus.map((c) => c.model))].join(", ");
  const speed = m.calibrationMs
    ? `; a fixed single-thread workload (bench/calibrate.mjs, median of 3) took ${m.calibrationMs.before} ms ` +
      `before the run and ${m.calibrationMs.after} ms after it (compare runs by it: the host under the 2 cores ` +
      `changes)`
    : "";
  return (
    `${m.cpuCount} × ${models}, ${(m.totalMemoryMB / 1024).toFixed(1)} GiB RAM, ${m.platform} ${m.release} ` +
    `${m.arch}, Node ${m.node}; CPU and peak RSS from ` +
    `${m.gnuTime ? "GNU time (/usr/bin/time)" : "process.resourceUsage() in the CLI process"}${speed}`
  );
}

/** Other processes share the machine: the 1-minute load average seen before the runs. */
function loadLine(r: BenchResults): string {
  const extras = [
    ...(r.startup?.loadAvg1 ?? []),
    ...(r.overlap?.loadAvg1 ?? []),
    ...(r.far?.loadAvg1 ?? []),
    ...(r.quota ?? []).map((q) => q.loadAvg1),
  ];
  const l = [...r.results.flatMap((q) => q.runs.map((x) => x.loadAvg1)), ...extras]
    .filter((x) => typeof x === "number")
    .sort((a, b) => a - b);
  if (!l.length) return "";
  return (
    `1-minute load average before each CLI run (other processes share the 2 cores): min ${l[0]!.toFixed(2)}, ` +
    `median ${l[l.length >> 1]!.toFixed(2)}, max ${l[l.length - 1]!.toFixed(2)}.`
  );
}

const verdictText = (ok: boolean | undefined) => (ok === undefined ? "not run" : ok ? "**met**" : "**not met**");

/** One target: its table, then a verdict line per figure ("met: 1.83x (target ≤ 2.00x)"). */
export function sectionText(sec: Section): string {
  const lines = [`#### ${sec.title}`, ""];
  if (sec.rows.length) lines.push(table(sec.head, sec.rows), "");
  if (sec.note) lines.push(sec.note, "");
  for (const v of sec.verdicts) lines.push(`- ${verdictWord(v)}: ${v.target}: ${v.figure} (target ${v.limit})`);
  return lines.join("\n");
}

export function summaryTable(sections: Section[]): string {
  return table(
    ["target", "verdict"],
    sections.map((sec) => [sec.title.replace(/\|/g, "\\|"), verdictText(overall(sec.verdicts))]),
  );
}

const ratioCell = (row: GrowthRow, of: "wallRatio" | "cpuRatio" | "rssRatio") => {
  const r = row[of];
  if (r === undefined) return "–";
  const k = growthExponent(row, of);
  return k === undefined ? x(r) : `${x(r)} (N^${k.toFixed(2)})`;
};

/** Growth of the batched L = 0 scenarios: each N against the previous one. */
export function growthTable(results: ScenarioResult[]): string {
  const rows = growth(results).map((g) => [
    g.scenario,
    num(g.n),
    g.nRatio ? `${g.nRatio}x` : "–",
    s(g.wallMs),
    ratioCell(g, "wallRatio"),
    s(g.cpuMs),
    ratioCell(g, "cpuRatio"),
    g.maxRssMB.toFixed(0),
    ratioCell(g, "rssRatio"),
  ]);
  if (!rows.length) return "(one N only: no growth to show)";
  return table(
    [
      "scenario",
      "N",
      "N × previous",
      "wall s",
      "× previous wall",
      "CPU s",
      "× previous CPU",
      "peak RSS MB",
      "× previous RSS",
    ],
    rows,
  );
}

export function renderReport(r: BenchResults): string {
  const sections = [issue45Section(r), ...issue20Sections(r)];
  const parts = r.partMs
    ? ` (${Object.entries(r.partMs)
        .map(([k, v]) => `${k} ${s(v)} s`)
        .join(", ")})`
    : "";
  return [
    `Run: \`${r.command}\` (${r.mode}), ${r.date}, ${s(r.durationMs)} s in all${parts}.`,
    "",
    `Machine: ${machineLine(r.machine)}.`,
    "",
    loadLine(r),
    "",
    "### Targets",
    "",
    summaryTable(sections),
    "",
    sections.map(sectionText).join("\n\n"),
    "",
    "### Growth from 1,000 to 100,000 resources (batched, L = 0; each N against the " +
      "previous one; N^k: the growth exponent, 1 = linear)",
    "",
    growthTable(r.results),
    "",
    "### Results",
    "",
    resultsTable(r.results),
    "",
    "### Batching on vs off (per-resource: one read-modify-write per resource, as Terraform's " +
      "Google provider and Pulumi's google-native do; bench/per-resource)",
    "",
    batchingTable(r.results),
    "",
    "### Earlier targets (N = 10,000 within 3 s / 400 MB / 10 s; phases within 1.25x)",
    "",
    targetsTable(checkTargets(r.results)),
    ...(r.page ? ["", pageSection(r.page)] : []),
  ].join("\n");
}

export const DOC_BEGIN = "<!-- bench:results:begin (generated by `npm run bench -- --docs`) -->";
export const DOC_END = "<!-- bench:results:end -->";

/** Replaces the generated part of docs/BENCHMARKS.md, keeping the prose around it. */
export function updateDoc(path: string, report: string): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    text = `# Benchmarks\n\n${DOC_BEGIN}\n${DOC_END}\n`;
  }
  const a = text.indexOf(DOC_BEGIN);
  const b = text.indexOf(DOC_END);
  if (a < 0 || b < a) text = `${text.trimEnd()}\n\n${DOC_BEGIN}\n${DOC_END}\n`;
  const start = text.indexOf(DOC_BEGIN) + DOC_BEGIN.length;
  const end = text.indexOf(DOC_END);
  writeFileSync(path, `${text.slice(0, start)}\n${report}\n${text.slice(end)}`);
}

/** The review page at scale (bench/page.ts): medians, with min and max, of each run. */
function pageSection(p: PageResult): string {
  const stats = (ms: number[]) => {
    const v = [...ms].sort((a, b) => a - b);
    return [v[v.length >> 1]!, v[0]!, v[v.length - 1]!].map((x) => x.toFixed(0));
  };
  const head = ["measure", "median ms", "min ms", "max ms"];
  const rows = [
    ["load (navigation until the page is built)", ...stats(p.loadMs)],
    ["principal filter applied and drawn", ...stats(p.principalFilterMs)],
    ["change filter: revoked, then every grant, applied and drawn", ...stats(p.changeFilterMs)],
  ];
  return [
    `### Review page (plan --format html of N = ${num(p.resources)}, cold: ${num(p.accessChanges)} access changes; ` +
      `${num(Math.round(p.pageBytes / 1024))} KiB; headless Chromium, ${p.runs} runs; plan ${s(p.planMs)} s)`,
    "",
    table(head, rows),
  ].join("\n");
}
