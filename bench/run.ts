// `npm run bench [-- options]`: benchmarks plan and apply against the emulator (issue 7).
//
//   --quick              N = 1,000, L in {0, 20} ms, batched; per-resource at L = 20 ms only; once; start-up
//                        (5 rounds), overlap (1 pair) and the review page; no quota, no scale (about a minute)
//   (default: full)      N in {1,000, 10,000}, L in {0, 20} ms, batching on (3 runs, median) and off (1 run);
//                        start-up, overlap, far, quota (issues 20 and 45; bench/extras.ts)
//   --scale              also N = 100,000, L = 0, batched, a cold apply, then 3 no-op plans (--docs implies it)
//   --only PARTS         run only these parts: matrix,startup,overlap,far,quota,scale,page (e.g. --only page)
//                        (far: a no-op plan of 10,000 resources at 100 ms, issue 45)
//                        (page: the review page of a 10,000-resource cold plan in headless Chromium,
//                        bench/page.ts; in quick and full runs)
//   --startup-rounds K   rounds of node -e 0 / --version / validate (default 15; --quick: 5)
//   --quota-p P          policies of the quota scenario (default 220), --quota-q Q its write quota a
//                        minute (default 600; the request quota is 2Q, the same bound)
//   --n 1000,10000       resource counts (multiples of 20)
//   --latency 0,20       emulator latency per request, ms
//   --modes batched,per-resource
//   --per-resource-max-n N   skip per-resource runs with L > 0 above this N (default: no limit)
//   --per-resource-latency 0,20  latencies of the per-resource runs (default: all; --quick: 20)
//   --repeat R           runs of each batched scenario (median reported); per-resource runs once
//   --parallelism P      the CLI's --parallelism (default 10)
//   --out FILE           results JSON (default bench/results/{mode}-{date}.json)
//   --docs               also write the tables into docs/BENCHMARKS.md
//   --table FILE         print the tables of an earlier results file and exit
//   --keep               keep the scratch directory (generated stacks, states, outputs)
//   --cpu-prof DIR       write V8 CPU profiles of every CLI run to DIR, a folder per run with a
//                        file per thread (summarise one with `tsx bench/profile-summary.ts FILE`);
//                        timings then include the profiler
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  readdirSync,
} from "node:fs";
import { cpus, totalmem, platform, release, arch, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startBenchEmulator } from "./emulator.js";
import { generate, quotaShape, type Generated } from "./generate.js";
import {
  runOverlap,
  runQuota,
  runStartup,
  type ExtraContext,
  type OverlapResult,
  type QuotaRun,
  type StartupResult,
} from "./extras.js";
import { ISSUE20, ISSUE45 } from "./targets.js";
import { runPage, type PageResult } from "./page.js";
import { calibrationMs, gnuTimeAvailable } from "./measure.js";
import { renderReport, updateDoc, type BenchResults, type Failure, type Machine } from "./report.js";
import { runConfig, type Config, type ScenarioResult } from "./scenarios.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin", "converge.js");

const list = (text: string) =>
  text
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
const numbers = (text: string, flag: string) =>
  list(text).map((v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${flag}: "${v}" is not a number`);
    return n;
  });

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const PARTS = ["matrix", "startup", "overlap", "far", "quota", "scale", "page"] as const;
/** Resources of the review page's stack (a cold plan: an access change or more each). */
const PAGE_N = 10_000;
type Part = (typeof PARTS)[number];

interface Plan {
  parts: Set<Part>;
  sizes: number[];
  latencies: number[];
  modes: string[];
  perResourceMaxN: number;
  perResourceLatencies: number[];
  repeat: number;
  parallelism: number;
  startupRounds: number;
  overlapRepeat: number;
  quotaP: number;
  quotaQ: number;
  log: (line: string) => void;
}

/** The N x L matrix (bench/scenarios.ts). */
async function runMatrix(plan: Plan, ctx: ExtraContext, cpuProfDir: string | undefined): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const n of plan.sizes)
    results.push(...(await runJob(plan, ctx, { n, latencies: plan.latencies, modes: plan.modes }, cpuProfDir)));
  return results;
}

/** N = 100,000, L = 0, batched: a cold apply (once: each one needs a fresh world), then the no-op
 *  plan three times (median wall, like every other batched figure). It may fail (out of memory, a
 *  crash): recorded in `failures`, the run's other results are kept. */
async function runScale(plan: Plan, ctx: ExtraContext, failures: Failure[]): Promise<ScenarioResult[]> {
  try {
    return await runJob(
      plan,
      ctx,
      {
        n: ISSUE20.scale.n,
        latencies: [0],
        modes: ["batched"],
        scenarios: ["cold-apply", ...Array<"noop-plan">(ISSUE20.scale.noopPlanRuns).fill("noop-plan")],
      },
      undefined,
    );
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    plan.log(`  N=${ISSUE20.scale.n}: FAILED: ${message}`);
    failures.push({ part: "scale", message: message.slice(0, 2_000) });
    return [];
  }
}

type Job = { n: number; latencies: number[]; modes: string[]; scenarios?: Config["scenarios"] };

async function runJob(
  plan: Plan,
  ctx: ExtraContext,
  job: Job,
  cpuProfDir: string | undefined,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const t0 = Date.now();
  const inputs = generate(join(ctx.workdir, `n${job.n}`), job.n);
  const emulator = await startBenchEmulator(BIN, inputs.seed);
  plan.log(`  N=${job.n}: stacks generated and emulator seeded in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  try {
    for (const latencyMs of job.latencies) {
      for (const m of job.modes) {
        const batching = m === "batched";
        if (
          !batching &&
          ((latencyMs > 0 && job.n > plan.perResourceMaxN) || !plan.perResourceLatencies.includes(latencyMs))
        )
          continue;
        const config: Config = {
          n: job.n,
          latencyMs,
          batching,
          parallelism: plan.parallelism,
          repeat: batching && !job.scenarios ? plan.repeat : 1,
          ...(job.scenarios ? { scenarios: job.scenarios } : {}),
        };
        results.push(
          ...(await runConfig(config, {
            bin: BIN,
            emulator,
            inputs,
            workdir: ctx.workdir,
            useGnuTime: ctx.useGnuTime,
            log: plan.log,
            ...(cpuProfDir ? { cpuProfDir } : {}),
          })),
        );
      }
    }
  } finally {
    await emulator.stop();
  }
  return results;
}

interface Extras {
  startup?: StartupResult;
  overlap?: OverlapResult;
  far?: OverlapResult;
  quota?: QuotaRun[];
  page?: PageResult;
}

/** Start-up and overlap (on the 2,000-resource stack; start-up validates a 10,000 one too), far (a
 *  no-op plan of 10,000 at 100 ms), quota (on its own world). */
async function runExtras(plan: Plan, ctx: ExtraContext): Promise<Extras> {
  const out: Extras = {};
  if (plan.parts.has("startup") || plan.parts.has("overlap")) {
    const inputs = generate(join(ctx.workdir, `n${ISSUE20.overlapN}`), ISSUE20.overlapN);
    if (plan.parts.has("startup")) {
      const large = generate(join(ctx.workdir, `n${ISSUE45.far.n}`), ISSUE45.far.n);
      out.startup = await runStartup(ctx, inputs, plan.startupRounds, large);
    }
    if (plan.parts.has("overlap"))
      out.overlap = await withEmulator(inputs, (emulator) =>
        runOverlap(ctx, emulator, inputs, {
          latencyMs: ISSUE20.overlapLatencyMs,
          parallelism: plan.parallelism,
          repeat: plan.overlapRepeat,
        }),
      );
  }
  if (plan.parts.has("far")) {
    const inputs = generate(join(ctx.workdir, `n${ISSUE45.far.n}`), ISSUE45.far.n);
    const o = { latencyMs: ISSUE45.far.latencyMs, parallelism: plan.parallelism, repeat: 1 };
    out.far = await withEmulator(inputs, (emulator) => runOverlap(ctx, emulator, inputs, o));
  }
  if (plan.parts.has("quota")) {
    const inputs = generate(join(ctx.workdir, `quota-p${plan.quotaP}`), plan.quotaP, quotaShape(plan.quotaP));
    out.quota = await withEmulator(inputs, async (emulator) => {
      const runs: QuotaRun[] = [];
      // A write quota Q, and a request quota 2Q (reads count too: 2P requests, the same bound P/Q).
      for (const [kind, perMinute] of [
        ["write", plan.quotaQ],
        ["request", 2 * plan.quotaQ],
      ] as const) {
        for (const withRate of [true, false])
          runs.push(
            await runQuota(
              ctx,
              emulator,
              inputs,
              { kind, service: "gkebackup", perMinute, withRate },
              plan.parallelism,
            ),
          );
      }
      return runs;
    });
  }
  if (plan.parts.has("page")) {
    const inputs = generate(join(ctx.workdir, `page-n${PAGE_N}`), PAGE_N);
    out.page = await withEmulator(inputs, (emulator) => runPage(ctx, emulator, inputs, plan.repeat));
  }
  return out;
}

async function withEmulator<T>(
  inputs: Generated,
  f: (e: Awaited<ReturnType<typeof startBenchEmulator>>) => Promise<T>,
): Promise<T> {
  const emulator = await startBenchEmulator(BIN, inputs.seed);
  try {
    return await f(emulator);
  } finally {
    await emulator.stop();
  }
}

function parseOptions() {
  return parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      n: { type: "string" },
      latency: { type: "string" },
      modes: { type: "string" },
      "per-resource-max-n": { type: "string" },
      "per-resource-latency": { type: "string" },
      repeat: { type: "string" },
      parallelism: { type: "string", default: "10" },
      out: { type: "string" },
      docs: { type: "boolean", default: false },
      table: { type: "string" },
      keep: { type: "boolean", default: false },
      "cpu-prof": { type: "string" },
      scale: { type: "boolean", default: false },
      only: { type: "string" },
      "startup-rounds": { type: "string" },
      "quota-p": { type: "string" },
      "quota-q": { type: "string" },
    },
    strict: true,
  }).values;
}

function planOf(values: ReturnType<typeof parseOptions>, log: (line: string) => void): Plan & { runMode: string } {
  const quick = values.quick;
  const only = values.only ? list(values.only) : undefined;
  for (const p of only ?? [])
    if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only: "${p}" is not one of ${PARTS.join(", ")}`);
  const scale: Part[] = values.scale || values.docs ? ["scale"] : [];
  const full: Part[] = ["matrix", "startup", "overlap", "far", "quota", "page", ...scale];
  const parts = new Set<Part>(
    (only as Part[] | undefined) ?? (quick ? ["matrix", "startup", "overlap", "page"] : full),
  );
  const latencies = values.latency ? numbers(values.latency, "--latency") : [0, 20];
  const modes = values.modes ? list(values.modes) : ["batched", "per-resource"];
  for (const m of modes)
    if (m !== "batched" && m !== "per-resource") throw new Error(`--modes: "${m}" is not batched or per-resource`);
  const custom =
    values.n ||
    values.latency ||
    values.modes ||
    values["per-resource-max-n"] ||
    values["per-resource-latency"] ||
    values.only;
  return {
    runMode: quick ? "quick" : custom ? "custom" : parts.has("scale") ? "full+scale" : "full",
    parts,
    sizes: values.n ? numbers(values.n, "--n") : quick ? [1_000] : [1_000, 10_000],
    latencies,
    modes,
    perResourceMaxN: values["per-resource-max-n"] ? Number(values["per-resource-max-n"]) : Infinity,
    perResourceLatencies: values["per-resource-latency"]
      ? numbers(values["per-resource-latency"], "--per-resource-latency")
      : quick
        ? [20]
        : latencies,
    repeat: values.repeat ? Number(values.repeat) : quick ? 1 : 3,
    parallelism: Number(values.parallelism),
    startupRounds: values["startup-rounds"] ? Number(values["startup-rounds"]) : quick ? 5 : 15,
    overlapRepeat: values.repeat ? Number(values.repeat) : quick ? 1 : 5,
    quotaP: values["quota-p"] ? Number(values["quota-p"]) : 220,
    quotaQ: values["quota-q"] ? Number(values["quota-q"]) : 600,
    log,
  };
}

function machineOf(useGnuTime: boolean, calibration: Machine["calibrationMs"]): Machine {
  return {
    cpus: cpus().map((c) => ({ model: c.model.trim(), speedMHz: c.speed })),
    cpuCount: cpus().length,
    totalMemoryMB: Math.round(totalmem() / 2 ** 20),
    platform: platform(),
    release: release(),
    arch: arch(),
    node: process.versions.node,
    gnuTime: useGnuTime,
    calibrationMs: calibration,
  };
}

async function main(): Promise<number> {
  const values = parseOptions();
  if (values.table) {
    const report = renderReport(JSON.parse(readFileSync(values.table, "utf8")) as BenchResults);
    process.stdout.write(report + "\n");
    if (values.docs) updateDoc(join(ROOT, "docs", "BENCHMARKS.md"), report);
    return 0;
  }
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) throw new Error("dist/ is missing: run `npm run build` first");
  if (newestMtime(join(ROOT, "src")) > newestMtime(join(ROOT, "dist")))
    process.stderr.write("warning: src/ is newer than dist/; run `npm run build` to benchmark the current code\n");

  const log = (line: string) => process.stderr.write(line + "\n");
  const plan = planOf(values, log);
  const cpuProfDir = values["cpu-prof"] ? resolve(values["cpu-prof"]) : undefined;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const useGnuTime = gnuTimeAvailable();
  const argv = process.argv.slice(2);
  const command =
    process.env.npm_lifecycle_event === "bench"
      ? `npm run bench${argv.length ? ` -- ${argv.join(" ")}` : ""}`
      : `tsx bench/run.ts ${argv.join(" ")}`.trim();
  log(
    `converge bench (${plan.runMode}): parts=${[...plan.parts].join(",")} N=${plan.sizes.join(",")} L=` +
      `${plan.latencies.join(",")}ms modes=${plan.modes.join(",")} (per-resource at L=` +
      `${plan.perResourceLatencies.join(",")}ms) repeat=${plan.repeat} parallelism=${plan.parallelism}`,
  );

  const calibrationBefore = calibrationMs();
  const workdir = mkdtempSync(join(tmpdir(), "converge-bench-"));
  const started = Date.now();
  const ctx: ExtraContext = { bin: BIN, workdir, useGnuTime, log, ...(cpuProfDir ? { cpuProfDir } : {}) };
  let results: ScenarioResult[];
  let extras: Extras;
  const failures: Failure[] = [];
  const partMs: Record<string, number> = {};
  try {
    let t = Date.now();
    results = plan.parts.has("matrix") ? await runMatrix(plan, ctx, cpuProfDir) : [];
    partMs.matrix = Date.now() - t;
    t = Date.now();
    extras = await runExtras(plan, ctx);
    partMs.extras = Date.now() - t;
    t = Date.now();
    if (plan.parts.has("scale")) {
      results.push(...(await runScale(plan, ctx, failures)));
      partMs.scale = Date.now() - t;
    }
  } finally {
    if (values.keep) log(`scratch directory kept: ${workdir}`);
    else rmSync(workdir, { recursive: true, force: true });
  }

  const { sizes, latencies, modes, repeat, perResourceLatencies, parallelism, perResourceMaxN } = plan;
  const out: BenchResults = {
    mode: plan.runMode,
    date: new Date().toISOString(),
    command,
    machine: machineOf(useGnuTime, { before: calibrationBefore, after: calibrationMs() }),
    options: {
      parts: [...plan.parts],
      sizes,
      latencies,
      modes,
      repeat,
      perResourceRepeat: 1,
      perResourceLatencies,
      parallelism,
      perResourceMaxN: Number.isFinite(perResourceMaxN) ? perResourceMaxN : null,
      startupRounds: plan.startupRounds,
      overlapRepeat: plan.overlapRepeat,
      quotaP: plan.quotaP,
      quotaQ: plan.quotaQ,
    },
    durationMs: Date.now() - started,
    partMs,
    results,
    ...extras,
    ...(failures.length ? { failures } : {}),
  };
  const file = values.out ?? join(ROOT, "bench", "results", `${plan.runMode}-${out.date.replace(/[:.]/g, "-")}.json`);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, JSON.stringify(out, null, 2) + "\n");
  const report = renderReport(out);
  process.stdout.write(report + "\n");
  log(`\nresults: ${relative(process.cwd(), file) || file}`);
  if (values.docs) {
    updateDoc(join(ROOT, "docs", "BENCHMARKS.md"), report);
    log("tables written to docs/BENCHMARKS.md");
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
