// `npm run bench [-- options]`: benchmarks plan and apply against the emulator (issue 7).
//
//   --quick              N = 1,000, L in {0, 20} ms, batched; per-resource at L = 20 ms only; once (< 1 minute)
//   (default: full)      N in {1,000, 10,000}, L in {0, 20} ms, batching on (3 runs, median) and off (1 run)
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
//   --cpu-prof DIR       write a V8 CPU profile of every CLI run to DIR (summarise one with
//                        `tsx bench/profile-summary.ts FILE`); timings then include the profiler
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from "node:fs";
import { cpus, totalmem, platform, release, arch, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startBenchEmulator } from "./emulator.js";
import { generate } from "./generate.js";
import { gnuTimeAvailable } from "./measure.js";
import { renderReport, updateDoc, type BenchResults, type Machine } from "./report.js";
import { runConfig, type Config, type ScenarioResult } from "./scenarios.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin", "converge.js");

const list = (text: string) => text.split(",").map((v) => v.trim()).filter(Boolean);
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

async function main(): Promise<number> {
  const { values } = parseArgs({
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
    },
    strict: true,
  });

  if (values.table) {
    const report = renderReport(JSON.parse(readFileSync(values.table, "utf8")) as BenchResults);
    process.stdout.write(report + "\n");
    if (values.docs) updateDoc(join(ROOT, "docs", "BENCHMARKS.md"), report);
    return 0;
  }

  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) throw new Error("dist/ is missing: run `npm run build` first");
  if (newestMtime(join(ROOT, "src")) > newestMtime(join(ROOT, "dist"))) process.stderr.write("warning: src/ is newer than dist/; run `npm run build` to benchmark the current code\n");

  const quick = values.quick;
  const sizes = values.n ? numbers(values.n, "--n") : quick ? [1_000] : [1_000, 10_000];
  const latencies = values.latency ? numbers(values.latency, "--latency") : [0, 20];
  const modes = values.modes ? list(values.modes) : ["batched", "per-resource"];
  for (const m of modes) if (m !== "batched" && m !== "per-resource") throw new Error(`--modes: "${m}" is not batched or per-resource`);
  const perResourceMaxN = values["per-resource-max-n"] ? Number(values["per-resource-max-n"]) : Infinity;
  const perResourceLatencies = values["per-resource-latency"] ? numbers(values["per-resource-latency"], "--per-resource-latency") : quick ? [20] : latencies;
  const repeat = values.repeat ? Number(values.repeat) : quick ? 1 : 3;
  const parallelism = Number(values.parallelism);
  const runMode = quick ? "quick" : values.n || values.latency || values.modes || values["per-resource-max-n"] || values["per-resource-latency"] ? "custom" : "full";

  const cpuProfDir = values["cpu-prof"] ? resolve(values["cpu-prof"]) : undefined;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const useGnuTime = gnuTimeAvailable();
  const machine: Machine = {
    cpus: cpus().map((c) => ({ model: c.model.trim(), speedMHz: c.speed })),
    cpuCount: cpus().length,
    totalMemoryMB: Math.round(totalmem() / 2 ** 20),
    platform: platform(),
    release: release(),
    arch: arch(),
    node: process.versions.node,
    gnuTime: useGnuTime,
  };
  const argv = process.argv.slice(2);
  const command = process.env.npm_lifecycle_event === "bench" ? `npm run bench${argv.length ? ` -- ${argv.join(" ")}` : ""}` : `tsx bench/run.ts ${argv.join(" ")}`.trim();
  const log = (line: string) => process.stderr.write(line + "\n");
  log(`converge bench (${runMode}): N=${sizes.join(",")} L=${latencies.join(",")}ms modes=${modes.join(",")} (per-resource at L=${perResourceLatencies.join(",")}ms) repeat=${repeat} parallelism=${parallelism}`);

  const workdir = mkdtempSync(join(tmpdir(), "converge-bench-"));
  const started = Date.now();
  const results: ScenarioResult[] = [];
  try {
    for (const n of sizes) {
      const inputs = generate(join(workdir, `n${n}`), n);
      const emulator = await startBenchEmulator(BIN, inputs.seed);
      try {
        for (const latencyMs of latencies) {
          for (const m of modes) {
            const batching = m === "batched";
            if (!batching && ((latencyMs > 0 && n > perResourceMaxN) || !perResourceLatencies.includes(latencyMs))) continue;
            const config: Config = { n, latencyMs, batching, parallelism, repeat: batching ? repeat : 1 };
            results.push(...(await runConfig(config, { bin: BIN, emulator, inputs, workdir, useGnuTime, log, ...(cpuProfDir ? { cpuProfDir } : {}) })));
          }
        }
      } finally {
        await emulator.stop();
      }
    }
  } finally {
    if (values.keep) log(`scratch directory kept: ${workdir}`);
    else rmSync(workdir, { recursive: true, force: true });
  }

  const out: BenchResults = {
    mode: runMode,
    date: new Date().toISOString(),
    command,
    machine,
    options: { sizes, latencies, modes, repeat, perResourceRepeat: 1, perResourceLatencies, parallelism, perResourceMaxN: Number.isFinite(perResourceMaxN) ? perResourceMaxN : null },
    durationMs: Date.now() - started,
    results,
  };
  const file = values.out ?? join(ROOT, "bench", "results", `${runMode}-${out.date.replace(/[:.]/g, "-")}.json`);
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
