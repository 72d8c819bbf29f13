// Issue 20's scenarios besides the N x L matrix (bench/scenarios.ts):
//   start-up   `node -e 0`, `converge --version` and `converge validate -f STACK` (2,000 resources,
//              and 10,000), run in turn (paired), wall time only, no probe
//   overlap    a no-op plan of the 2,000-resource stack at L = 20 ms, paired with `validate` of it:
//              (plan − validate) against the bound of one round of P reads
//   quota      a cold apply of P policies on one service under an emulated quota (429 with
//              Retry-After), with `--rate` set to the quota and with the CLI's defaults
import { mkdirSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { BenchEmulator } from "./emulator.js";
import { summarizeStats } from "./emulator.js";
import type { Generated } from "./generate.js";
import { runCli, timeCommand } from "./measure.js";
import { floorSpan } from "./scenarios.js";
import { quotaBoundMs, roundBoundMs } from "./targets.js";

export interface ExtraContext {
  bin: string;
  workdir: string;
  useGnuTime: boolean;
  log: (line: string) => void;
  /** Write a V8 CPU profile of every measured CLI run here, a folder per run (see scenarios.ts) */
  cpuProfDir?: string;
}

const cliEnv = (emulator?: BenchEmulator): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: "1",
    ...(emulator ? { CLOUDNATIVE_EMULATOR_HOST: emulator.hostPort } : {}),
  };
  delete env.CLOUDNATIVE_ACCESS_TOKEN;
  delete env.GOOGLE_OAUTH_ACCESS_TOKEN;
  return env;
};
const sec = (ms: number) => (ms / 1000).toFixed(2);

export interface StartupResult {
  pairs: number;
  /** Resources in the validated stack */
  validateN: number;
  /** Wall ms per run, index i of each list from the same pair */
  nodeMs: number[];
  versionMs: number[];
  validateMs: number[];
  /** `validate` of a larger stack in the same rounds (issue 45: 10,000 resources) */
  large?: { n: number; validateMs: number[] };
  loadAvg1: number[];
}

/** `pairs` rounds of node -e 0 / converge --version / converge validate, the order reversed every
 *  other round (drift in the machine's load falls on both sides); one unmeasured warm-up round. */
export async function runStartup(
  ctx: ExtraContext,
  inputs: Generated,
  pairs: number,
  large?: Generated,
): Promise<StartupResult> {
  const cwd = join(ctx.workdir, "startup");
  mkdirSync(cwd, { recursive: true });
  const o = { cwd, env: cliEnv() };
  const r: StartupResult = {
    pairs,
    validateN: inputs.shape.n,
    nodeMs: [],
    versionMs: [],
    validateMs: [],
    loadAvg1: [],
  };
  if (large) r.large = { n: large.shape.n, validateMs: [] };
  const commands: [number[], string[]][] = [
    [r.nodeMs, ["-e", "0"]],
    [r.versionMs, [ctx.bin, "--version"]],
    [r.validateMs, [ctx.bin, "validate", "-f", inputs.stack, "--no-color"]],
  ];
  if (large && r.large) commands.push([r.large.validateMs, [ctx.bin, "validate", "-f", large.stack, "--no-color"]]);
  for (let i = -1; i < pairs; i++) {
    r.loadAvg1.push(loadavg()[0]!);
    const order = i % 2 ? [...commands].reverse() : commands;
    for (const [samples, args] of order) {
      const t = await timeCommand(process.execPath, args, o);
      if (t.exitCode !== 0) throw new Error(`start-up: node ${args.join(" ")}: exit ${t.exitCode}: ${t.stderr}`);
      if (i >= 0) samples.push(t.wallMs);
    }
  }
  r.loadAvg1.shift();
  const last = (xs: number[]) => sec(xs[xs.length - 1]!);
  const big = r.large ? `, validate (N=${r.large.n}) ${last(r.large.validateMs)}s` : "";
  ctx.log(
    `  start-up: ${pairs} rounds; last: node -e 0 ${last(r.nodeMs)}s, --version ${last(r.versionMs)}s, ` +
      `validate (N=${inputs.shape.n}) ${last(r.validateMs)}s${big}`,
  );
  return r;
}

export interface OverlapResult {
  n: number;
  p: number;
  latencyMs: number;
  parallelism: number;
  /** ceil(P / parallelism) x L: one round of P reads */
  boundMs: number;
  planMs: number[];
  validateMs: number[];
  /** The refresh phase (first getIamPolicy sent to last answered) of each plan, as the CLI saw it */
  refreshSpanMs: number[];
  /** Reads of the last plan, per the emulator (P expected) */
  reads: number;
  loadAvg1: number[];
  /** Calibration, once per pair: the span of the same P reads from a bare HTTP loop in a fresh
   *  process (bench/floor.mjs), what this machine and emulator allow the refresh at best */
  floorMs?: number[];
}

/** Applies the stack at L = 0 (set-up, unmeasured), then at L = latencyMs runs `repeat` pairs of
 *  validate and no-op plan, both through the same harness (probe preloaded in both). */
export async function runOverlap(
  ctx: ExtraContext,
  emulator: BenchEmulator,
  inputs: Generated,
  o: { latencyMs: number; parallelism: number; repeat: number },
): Promise<OverlapResult> {
  const dir = join(ctx.workdir, `overlap-n${inputs.shape.n}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const state = join(dir, "state.json");
  // `profile`: the folder of this run's CPU profiles under ctx.cpuProfDir (the set-up is not profiled).
  const run = (args: string[], profile?: string) =>
    runCli(ctx.bin, args, {
      cwd: dir,
      env: cliEnv(emulator),
      scratch: dir,
      useGnuTime: ctx.useGnuTime,
      nodeFlags: ctx.cpuProfDir && profile ? ["--cpu-prof", "--cpu-prof-dir", join(ctx.cpuProfDir, profile)] : [],
      abort: emulator.crashed,
    });
  const runName = (what: string, i: number) => `overlap-n${inputs.shape.n}-l${o.latencyMs}-${what}-${i + 1}`;
  const common = ["-f", inputs.stack, "--no-color"];
  await emulator.reset();
  const setup = await run([
    "apply",
    "--auto-approve",
    ...common,
    "--state",
    state,
    "--parallelism",
    String(o.parallelism),
  ]);
  if (setup.exitCode !== 0)
    throw new Error(`overlap set-up apply: exit ${setup.exitCode}: ${setup.stdoutTail}\n${setup.stderrTail}`);
  await emulator.setLatency(o.latencyMs);
  const r: OverlapResult = {
    n: inputs.shape.n,
    p: inputs.shape.p,
    latencyMs: o.latencyMs,
    parallelism: o.parallelism,
    boundMs: roundBoundMs(inputs.shape.p, o.parallelism, o.latencyMs),
    planMs: [],
    validateMs: [],
    refreshSpanMs: [],
    reads: 0,
    loadAvg1: [],
    floorMs: [],
  };
  for (let i = 0; i < o.repeat; i++) {
    r.loadAvg1.push(loadavg()[0]!);
    const pair = [
      async () => {
        const v = await run(["validate", ...common], runName("validate", i));
        if (v.exitCode !== 0) throw new Error(`overlap validate: exit ${v.exitCode}: ${v.stderrTail}`);
        r.validateMs.push(v.wallMs);
      },
      async () => {
        await emulator.resetStats();
        const p = await run(
          ["plan", ...common, "--state", state, "--parallelism", String(o.parallelism)],
          runName("noop-plan", i),
        );
        if (p.exitCode !== 0 || !/^No changes\./m.test(p.stdoutSummary))
          throw new Error(`overlap no-op plan: exit ${p.exitCode}: ${p.stdoutTail}\n${p.stderrTail}`);
        r.planMs.push(p.wallMs);
        const span = p.http.getIamPolicy;
        if (span) r.refreshSpanMs.push(span.lastEndMs - span.firstStartMs);
        r.reads = summarizeStats(await emulator.stats()).reads;
      },
    ];
    for (const step of i % 2 ? [...pair].reverse() : pair) await step();
    r.floorMs!.push(await floorSpan(emulator.hostPort, r.p, o.parallelism));
    ctx.log(
      `  overlap N=${r.n} P=${r.p} L=${o.latencyMs}ms: plan ${sec(r.planMs[i]!)}s validate ` +
        `${sec(r.validateMs[i]!)}s (bound ${sec(r.boundMs)}s, bare loop ${sec(r.floorMs![i]!)}s)`,
    );
  }
  await emulator.setLatency(0);
  return r;
}

export interface QuotaRun {
  /** "write": the quota is on the service's setIamPolicy calls (`service.write`); "request": on
   *  all its requests (reads too) */
  kind: "write" | "request";
  /** The emulator's quota key and rate, e.g. "gkebackup.write", 600 (per minute) */
  quotaKey: string;
  perMinute: number;
  p: number;
  /** The `--rate` given to the CLI, or null for its defaults */
  rate: string | null;
  /** Requests the quota counts: P writes, or P reads + P writes */
  calls: number;
  /** calls / Q */
  boundMs: number;
  wallMs: number;
  exitCode: number;
  /** Exit 0 and "Apply complete! Resources: P added" */
  ok: boolean;
  summary: string;
  reads: number;
  writes: number;
  /** 429 RESOURCE_EXHAUSTED answers the emulator gave */
  exhausted: number;
  /** Non-OK answers by status, per the emulator */
  notOkByStatus: Record<string, number>;
  /** RESOURCE_EXHAUSTED retries the CLI reported (its "Retried" lines, every phase); absent
   *  from results older than issue 45 */
  reported429?: number;
  loadAvg1: number;
}

export interface QuotaCase {
  kind: QuotaRun["kind"];
  service: string;
  perMinute: number;
  withRate: boolean;
}

/** One cold apply of the quota world under `c`'s quota (fresh state, world reset). */
export async function runQuota(
  ctx: ExtraContext,
  emulator: BenchEmulator,
  inputs: Generated,
  c: QuotaCase,
  parallelism: number,
): Promise<QuotaRun> {
  const quotaKey = c.kind === "write" ? `${c.service}.write` : c.service;
  const rate = c.withRate ? `${quotaKey}=${c.perMinute}/min` : null;
  const dir = join(ctx.workdir, `quota-${c.kind}-${c.withRate ? "rate" : "default"}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await emulator.reset();
  await emulator.setFaults({ quotas: { [quotaKey]: c.perMinute } });
  const loadAvg1 = loadavg()[0]!;
  const args = [
    "apply",
    "--auto-approve",
    "-f",
    inputs.stack,
    "--state",
    join(dir, "state.json"),
    "--parallelism",
    String(parallelism),
    "--no-color",
    ...(rate ? ["--rate", rate] : []),
  ];
  const m = await runCli(ctx.bin, args, {
    cwd: dir,
    env: cliEnv(emulator),
    scratch: dir,
    useGnuTime: ctx.useGnuTime,
    abort: emulator.crashed,
  });
  const stats = summarizeStats(await emulator.stats());
  await emulator.setFaults({});
  const p = inputs.shape.p;
  const want = new RegExp(`^Apply complete! Resources: ${p} added, 0 changed, 0 destroyed\\.$`, "m");
  const calls = c.kind === "write" ? p : 2 * p;
  const run: QuotaRun = {
    kind: c.kind,
    quotaKey,
    perMinute: c.perMinute,
    p,
    rate,
    calls,
    boundMs: quotaBoundMs(calls, c.perMinute),
    wallMs: m.wallMs,
    exitCode: m.exitCode,
    ok: m.exitCode === 0 && want.test(m.stdoutSummary),
    summary: m.stdoutSummary.split("\n").pop() ?? "",
    reads: stats.reads,
    writes: stats.writes,
    exhausted: (stats.notOkByStatus.RESOURCE_EXHAUSTED ?? 0) + (stats.notOkByStatus["429"] ?? 0),
    notOkByStatus: stats.notOkByStatus,
    reported429: m.retried.RESOURCE_EXHAUSTED ?? 0,
    loadAvg1,
  };
  const failed = run.ok ? "" : ` FAILED (exit ${m.exitCode}): ${m.stdoutTail} ${m.stderrTail}`;
  ctx.log(
    `  quota ${quotaKey}=${c.perMinute}/min P=${p} ${rate ? `--rate ${rate}` : "default rates"}: ${sec(run.wallMs)}s ` +
      `(bound ${sec(run.boundMs)}s) ${run.reads} reads ${run.writes} writes ` +
      `${run.exhausted} x 429 (${run.reported429} reported)${failed}`,
  );
  return run;
}
