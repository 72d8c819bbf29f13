// The scenarios, run in order against one emulator world and one state file:
//   cold-plan      no state, nothing granted yet
//   cold-apply     no state: grants everything
//   noop-plan      state and cloud match the stack
//   changed-plan   the 10%-changed stack (one resource per policy)
//   changed-apply  applies it
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { execFile } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { BenchEmulator } from "./emulator.js";
import { summarizeStats } from "./emulator.js";
import { LOCATION, PROJECT, type Generated, type Shape } from "./generate.js";
import { runCli, type Measurement } from "./measure.js";
import { median, roundBoundMs } from "./targets.js";

/** Preloaded into the CLI for the per-resource baseline (see bench/per-resource/port.mjs). */
const PER_RESOURCE = fileURLToPath(new URL("./per-resource/register.mjs", import.meta.url));
/** The unbundled CLI: the per-resource wrapper hooks dist/connect/cloud.js, which the bundled CLI
 *  that bin/converge.js runs (dist/bundle/) holds inside one of its files. */
const UNBUNDLED_CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

export const SCENARIOS = ["cold-plan", "cold-apply", "noop-plan", "changed-plan", "changed-apply"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Config {
  n: number;
  latencyMs: number;
  /** true: converge as it is; false: the per-resource baseline (bench/per-resource: the same CLI
   *  with a CloudPort wrapper that reads and read-modify-writes once per resource) */
  batching: boolean;
  parallelism: number;
  repeat: number;
  /** The scenarios to run, in SCENARIOS order (default: all); noop-plan needs cold-apply before it,
   *  changed-apply changed-plan's world (both are the changed stack against the applied one) */
  scenarios?: readonly Scenario[];
}

export interface Round {
  kind: "read" | "write";
  calls: number;
  boundMs: number;
}

export interface Phase {
  kind: "refresh" | "write";
  calls: number;
  spanMs: number;
  boundMs: number;
  /** spanMs / boundMs (undefined when the bound is 0) */
  ratio?: number;
}

export interface ScenarioResult {
  scenario: Scenario;
  n: number;
  p: number;
  latencyMs: number;
  batching: boolean;
  parallelism: number;
  /** Medians over the repetitions (wall, CPU); peak RSS is the maximum */
  wallMs: number;
  cpuMs: number;
  maxRssMB: number;
  /** loadAvg1: the machine's 1-minute load average just before the run (other processes compete for the 2 cores) */
  runs: {
    wallMs: number;
    cpuUserMs: number;
    cpuSystemMs: number;
    maxRssKB: number;
    uptimeMs: number;
    loadAvg1: number;
  }[];
  requests: {
    reads: number;
    writes: number;
    other: number;
    retries: number;
    byMethod: Record<string, number>;
    notOkByStatus: Record<string, number>;
  };
  /** What SPEC/issue 7 expects of batching: P reads per refresh, P reads + P writes per apply */
  expected: { reads: number; writes: number };
  /** (a) the network lower bound: ceil(calls / parallelism) x L per round of calls */
  rounds: Round[];
  boundMs: number;
  /** HTTP spans seen by the CLI (first request sent to last response received), per kind */
  phases: Phase[];
  /**
   * Calibration (L > 0, batched configs): the median time a bare HTTP loop (node:http) in a fresh process
   * takes for P reads at the same parallelism (bench/floor.mjs): what this machine and emulator
   * allow one round of calls, against `ceil(P / parallelism) x L` in theory.
   */
  floorMs?: number;
  /**
   * `converge validate` of the same stack (batched configs at L = 0: median over the repetitions):
   * what a plan does before it may send its first read (bad input: no network call). With
   * `floorMs`, the least a no-op plan can take on this machine before it reads its state or plans.
   */
  validateMs?: number;
  /** The summary line the CLI printed (checked against the expected counts) */
  summary: string;
  measurementSource: Measurement["source"];
}

function expectedSummary(s: Scenario, shape: Shape): RegExp {
  const { changedReplaced: replaced, changedUpdated: updated } = shape;
  switch (s) {
    case "cold-plan":
      return new RegExp(`^Plan: 0 to import, ${shape.n} to add, 0 to change, 0 to destroy\\.$`, "m");
    case "cold-apply":
      return new RegExp(`^Apply complete! Resources: ${shape.n} added, 0 changed, 0 destroyed\\.$`, "m");
    case "noop-plan":
      return /^No changes\./m;
    case "changed-plan":
      return new RegExp(
        `^Plan: 0 to import, ${replaced} to add, ${updated} to change, ${replaced} to destroy\\.$`,
        "m",
      );
    case "changed-apply":
      return new RegExp(
        `^Apply complete! Resources: ${replaced} added, ${updated} changed, ${replaced} destroyed\\.$`,
        "m",
      );
  }
}

function expectedCalls(s: Scenario, shape: Shape): { reads: number; writes: number } {
  const reads = shape.p;
  if (s === "cold-apply") return { reads, writes: shape.p };
  if (s === "changed-apply") return { reads, writes: shape.changedPolicies };
  return { reads, writes: 0 };
}

export interface RunContext {
  bin: string;
  emulator: BenchEmulator;
  inputs: Generated;
  workdir: string;
  useGnuTime: boolean;
  log: (line: string) => void;
  /** Write a CPU profile of every CLI run into this directory (node --cpu-prof) */
  cpuProfDir?: string;
  /** The bare loop's span (default floorSpan: bench/floor.mjs in a fresh process). */
  floorSpan?: typeof floorSpan;
}

/** Runs the five scenarios `config.repeat` times; returns one result per scenario, in order of first run. */
export async function runConfig(config: Config, ctx: RunContext): Promise<ScenarioResult[]> {
  const { shape } = ctx.inputs;
  const label = `N=${config.n} L=${config.latencyMs}ms batching=${config.batching}`;
  const dir = join(ctx.workdir, `n${config.n}-l${config.latencyMs}-${config.batching ? "batched" : "per-resource"}`);
  const env: NodeJS.ProcessEnv = { ...process.env, CLOUDNATIVE_EMULATOR_HOST: ctx.emulator.hostPort, NO_COLOR: "1" };
  delete env.CLOUDNATIVE_ACCESS_TOKEN;
  delete env.GOOGLE_OAUTH_ACCESS_TOKEN;
  const floors: number[] = [];
  const validations: number[] = [];
  const perScenario = new Map<
    Scenario,
    { m: Measurement[]; load: number[]; last?: ScenarioResult["requests"]; summary: string }
  >();

  for (let rep = 0; rep < config.repeat; rep++) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const state = join(dir, "state.json");
    await ctx.emulator.reset();
    await ctx.emulator.setLatency(config.latencyMs);
    for (const scenario of config.scenarios ?? SCENARIOS) {
      const stack = scenario.startsWith("changed") ? ctx.inputs.changedStack : ctx.inputs.stack;
      const verb = scenario.endsWith("apply") ? ["apply", "--auto-approve"] : ["plan"];
      const args = [...verb, "-f", stack, "--state", state, "--parallelism", String(config.parallelism), "--no-color"];
      await ctx.emulator.resetStats();
      // A folder per run: the CLI's HTTP worker thread writes a profile of its own, and Node names
      // each thread's file (CPU.{date}.{pid}.{thread}.{n}.cpuprofile: thread 0 is the main one).
      const prof = ctx.cpuProfDir
        ? [
            "--cpu-prof",
            "--cpu-prof-dir",
            join(
              ctx.cpuProfDir,
              `n${config.n}-l${config.latencyMs}-` +
                `${config.batching ? "batched" : "per-resource"}-${scenario}-` +
                `${rep + 1}`,
            ),
          ]
        : [];
      const loadBefore = loadavg()[0]!;
      const baseline = config.batching ? [] : ["--import", PER_RESOURCE];
      const m = await runCli(config.batching ? ctx.bin : UNBUNDLED_CLI, args, {
        cwd: dir,
        env: { ...env, CONVERGE_BENCH_STATE: state },
        scratch: dir,
        useGnuTime: ctx.useGnuTime,
        nodeFlags: [...prof, ...baseline],
        abort: ctx.emulator.crashed,
      });
      const stats = summarizeStats(await ctx.emulator.stats());
      const want = expectedSummary(scenario, shape);
      const summary = (want.exec(m.stdoutSummary)?.[0] ?? m.stdoutTail.trim().split("\n").pop() ?? "").trim();
      if (m.exitCode !== 0 || !want.test(m.stdoutSummary)) {
        throw new Error(
          `${label} ${scenario}: exit ${m.exitCode}; expected ${want} in the ` +
            `output, got:\n${m.stdoutTail}\n${m.stderrTail}`,
        );
      }
      if (scenario === "cold-apply" && existsSync(state)) copyFileSync(state, join(dir, "state.applied.json"));
      const entry = perScenario.get(scenario) ?? { m: [], load: [], summary };
      entry.m.push(m);
      entry.load.push(loadBefore);
      entry.last = {
        reads: stats.reads,
        writes: stats.writes,
        other: stats.other,
        retries: stats.notOk,
        byMethod: stats.byMethod,
        notOkByStatus: stats.notOkByStatus,
      };
      perScenario.set(scenario, entry);
      ctx.log(
        `  ${label} ${scenario.padEnd(13)} ${(m.wallMs / 1000).toFixed(2).padStart(7)}s wall ` +
          `${((m.cpuUserMs + m.cpuSystemMs) / 1000).toFixed(2).padStart(6)}s cpu ` +
          `${(m.maxRssKB / 1024).toFixed(0).padStart(5)} MB  ${stats.reads} reads ${stats.writes} writes` +
          `${stats.notOk ? ` ${stats.notOk} not-OK` : ""}`,
      );
    }
    if (config.batching) floors.push(await floorRun(ctx, shape, config));
    if (config.batching && config.latencyMs === 0) validations.push(await validateRun(ctx, config, dir, env));
  }

  const bound = (calls: number) => roundBoundMs(calls, config.parallelism, config.latencyMs);
  // A scenario listed more than once (the scale part's three no-op plans) is one result, whose
  // runs are all of them.
  return [...perScenario.keys()].map((scenario) => {
    const e = perScenario.get(scenario)!;
    const expected = expectedCalls(scenario, shape);
    const rounds: Round[] = [{ kind: "read", calls: expected.reads, boundMs: bound(expected.reads) }];
    if (expected.writes) rounds.push({ kind: "write", calls: expected.writes, boundMs: bound(expected.writes) });
    const last = e.m[e.m.length - 1]!;
    const phases: Phase[] = [];
    // Spans: the median over the repetitions.
    const phase = (kind: Phase["kind"], verb: string, boundMs: number): Phase | undefined => {
      const spans = e.m.map((m) => m.http[verb]).filter((x) => x !== undefined);
      if (!spans.length) return undefined;
      const spanMs = median(spans.map((x) => x.lastEndMs - x.firstStartMs));
      return {
        kind,
        calls: spans[spans.length - 1]!.count,
        spanMs,
        boundMs,
        ...(boundMs > 0 ? { ratio: spanMs / boundMs } : {}),
      };
    };
    const refresh = phase("refresh", "getIamPolicy", rounds[0]!.boundMs);
    const write = phase("write", "setIamPolicy", rounds[1]?.boundMs ?? 0);
    if (refresh) phases.push(refresh);
    if (write) phases.push(write);
    return {
      scenario,
      n: shape.n,
      p: shape.p,
      latencyMs: config.latencyMs,
      batching: config.batching,
      parallelism: config.parallelism,
      wallMs: median(e.m.map((m) => m.wallMs)),
      cpuMs: median(e.m.map((m) => m.cpuUserMs + m.cpuSystemMs)),
      maxRssMB: Math.max(...e.m.map((m) => m.maxRssKB)) / 1024,
      runs: e.m.map((m, i) => ({
        wallMs: m.wallMs,
        cpuUserMs: m.cpuUserMs,
        cpuSystemMs: m.cpuSystemMs,
        maxRssKB: m.maxRssKB,
        uptimeMs: m.uptimeMs,
        loadAvg1: e.load[i]!,
      })),
      requests: e.last!,
      expected,
      rounds,
      boundMs: rounds.reduce((a, r) => a + r.boundMs, 0),
      phases,
      ...(floors.length ? { floorMs: median(floors) } : {}),
      ...(validations.length ? { validateMs: median(validations) } : {}),
      summary: e.summary,
      measurementSource: last.source,
    };
  });
}

/** One calibration run of bench/floor.mjs (P reads, same parallelism, same latency). */
async function floorRun(ctx: RunContext, shape: Shape, config: Config): Promise<number> {
  const spanMs = await (ctx.floorSpan ?? floorSpan)(ctx.emulator.hostPort, shape.p, config.parallelism);
  ctx.log(
    `  N=${config.n} L=${config.latencyMs}ms floor (bare HTTP loop, ${shape.p} reads): ${(spanMs / 1000).toFixed(2)}s`,
  );
  return spanMs;
}

/** One `converge validate` of the config's stack: its wall time (ms). */
async function validateRun(ctx: RunContext, config: Config, dir: string, env: NodeJS.ProcessEnv): Promise<number> {
  const m = await runCli(ctx.bin, ["validate", "-f", ctx.inputs.stack, "--no-color"], {
    cwd: dir,
    env,
    scratch: dir,
    useGnuTime: ctx.useGnuTime,
    abort: ctx.emulator.crashed,
  });
  if (m.exitCode !== 0) throw new Error(`N=${config.n} validate: exit ${m.exitCode}: ${m.stderrTail}`);
  ctx.log(`  N=${config.n} L=${config.latencyMs}ms validate: ${(m.wallMs / 1000).toFixed(2)}s`);
  return m.wallMs;
}

/** The span of `p` reads at `parallelism` from a bare HTTP loop in a fresh process (bench/floor.mjs). */
export async function floorSpan(hostPort: string, p: number, parallelism: number): Promise<number> {
  const script = fileURLToPath(new URL("./floor.mjs", import.meta.url));
  const args = [script, hostPort, PROJECT, LOCATION, String(p), String(parallelism)];
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, args, { encoding: "utf8" }, (e, stdout) => (e ? reject(e) : resolve(stdout)));
  });
  const r = JSON.parse(out) as { spanMs: number; failed: number };
  if (r.failed) throw new Error(`floor run: ${r.failed} calls failed`);
  return r.spanMs;
}
