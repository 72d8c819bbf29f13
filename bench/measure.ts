// Runs one CLI command as a child process and measures it: wall time (from spawn to exit, so
// Node's start-up counts), CPU time and peak RSS (GNU time when installed, else the probe), and
// the HTTP calls it made with the time span of each kind (the probe, bench/probe.mjs).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROBE = fileURLToPath(new URL("./probe.mjs", import.meta.url));
export const GNU_TIME = "/usr/bin/time";

export function gnuTimeAvailable(): boolean {
  if (!existsSync(GNU_TIME)) return false;
  // BusyBox and BSD time have no -f/-o; check that this one is GNU's.
  return spawnSync(GNU_TIME, ["-f", "%M", "-o", "/dev/null", "true"], { stdio: "ignore" }).status === 0;
}

const CALIBRATE = fileURLToPath(new URL("./calibrate.mjs", import.meta.url));

/** The median time (ms) of `rounds` runs of bench/calibrate.mjs, each in a process of its own. */
export function calibrationMs(rounds = 3): number {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const r = spawnSync(process.execPath, [CALIBRATE], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`bench/calibrate.mjs failed (${r.status}): ${r.stderr}`);
    times.push(Number(r.stdout.trim()));
  }
  return times.sort((a, b) => a - b)[times.length >> 1]!;
}

export interface HttpSpan {
  count: number;
  /** ms since the process started */
  firstStartMs: number;
  lastEndMs: number;
  statuses: Record<string, number>;
}

export interface Measurement {
  exitCode: number;
  wallMs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  maxRssKB: number;
  /** Where CPU and RSS came from. */
  source: "gnu-time" | "probe";
  /** getIamPolicy / setIamPolicy / getFederation, as the CLI saw them */
  http: Record<string, HttpSpan>;
  /** Process uptime at exit (ms), per the probe */
  uptimeMs: number;
  stdoutTail: string;
  /** The summary lines of the output (Plan:, Apply complete!, No changes.), wherever they are:
   *  the access summary under a plan can push them out of the tail. */
  stdoutSummary: string;
  stderrTail: string;
  /** Retries the CLI reported, by cause: every "Retried N times: …" line of the whole output
   *  added up (an apply prints one for its plan's reads and one for its writes). */
  retried: Record<string, number>;
}

/** Adds up the "Retried N times: a × CAUSE, b × CAUSE." lines of `stdout`, by cause. */
export function retriedByCause(stdout: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of stdout.matchAll(/^\s*Retried \d+ times?: (.*)\.\s*$/gm)) {
    for (const part of line[1]!.split(", ")) {
      const m = /^(\d+) × (.+)$/.exec(part);
      if (m) out[m[2]!] = (out[m[2]!] ?? 0) + Number(m[1]);
    }
  }
  return out;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Directory for the probe's and time's output files */
  scratch: string;
  useGnuTime: boolean;
  /** Extra node flags (e.g. --cpu-prof) */
  nodeFlags?: string[];
  /** When this settles, the CLI is killed and runCli throws its text (the emulator crashed) */
  abort?: Promise<string>;
}

const tail = (text: string, lines: number) => text.split("\n").slice(-lines).join("\n");

export async function runCli(bin: string, args: string[], o: RunOptions): Promise<Measurement> {
  const probeOut = join(o.scratch, "probe.json");
  const timeOut = join(o.scratch, "time.txt");
  const stdoutFile = join(o.scratch, "stdout.txt");
  const stderrFile = join(o.scratch, "stderr.txt");
  for (const f of [probeOut, timeOut]) rmSync(f, { force: true });
  const nodeArgs = [...(o.nodeFlags ?? []), "--import", PROBE, bin, ...args];
  const [cmd, cmdArgs] = o.useGnuTime
    ? [GNU_TIME, ["-f", "%e %U %S %M", "-o", timeOut, process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs];
  const outFd = openSync(stdoutFile, "w");
  const errFd = openSync(stderrFile, "w");
  const t0 = process.hrtime.bigint();
  let aborted: string | undefined;
  const exitCode = await new Promise<number>((resolve, reject) => {
    const child = spawn(cmd, cmdArgs as string[], {
      cwd: o.cwd,
      env: { ...o.env, CONVERGE_BENCH_PROBE: probeOut },
      stdio: ["ignore", outFd, errFd],
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    void o.abort?.then((why) => {
      aborted = why;
      child.kill("SIGKILL");
    });
  });
  if (aborted) {
    closeSync(outFd);
    closeSync(errFd);
    throw new Error(`${aborted}\n(the CLI, stopped: ${tail(readFileSync(stdoutFile, "utf8"), 3)})`);
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  closeSync(outFd);
  closeSync(errFd);
  const stdout = readFileSync(stdoutFile, "utf8");
  const stderr = readFileSync(stderrFile, "utf8");
  if (!existsSync(probeOut)) throw new Error(`the CLI wrote no probe output (exit ${exitCode}): ${tail(stderr, 10)}`);
  const probe = JSON.parse(readFileSync(probeOut, "utf8")) as {
    uptimeMs: number;
    cpuUserMs: number;
    cpuSystemMs: number;
    maxRssKB: number;
    http: Record<string, HttpSpan>;
  };
  const m: Measurement = {
    exitCode,
    wallMs,
    cpuUserMs: probe.cpuUserMs,
    cpuSystemMs: probe.cpuSystemMs,
    maxRssKB: probe.maxRssKB,
    source: "probe",
    http: probe.http,
    uptimeMs: probe.uptimeMs,
    stdoutTail: tail(stdout, 8),
    stdoutSummary: stdout
      .split("\n")
      .filter((l) => /^(Plan: |Apply complete!|Destroy complete!|No changes\.)/.test(l))
      .join("\n"),
    stderrTail: tail(stderr, 10),
    retried: retriedByCause(stdout),
  };
  if (o.useGnuTime && existsSync(timeOut)) {
    // The last line: GNU time prints "Command exited with non-zero status N" first on failure.
    const last = readFileSync(timeOut, "utf8").trim().split("\n").pop() ?? "";
    const [, user, sys, rss] = last.split(/\s+/).map(Number);
    if ([user, sys, rss].every((x) => Number.isFinite(x)))
      Object.assign(m, { cpuUserMs: user! * 1000, cpuSystemMs: sys! * 1000, maxRssKB: rss!, source: "gnu-time" });
  }
  return m;
}

/** Wall time of one command (no probe, no GNU time: start-up measured as a user sees it). */
export async function timeCommand(
  cmd: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ wallMs: number; exitCode: number; stderr: string }> {
  const t0 = process.hrtime.bigint();
  let stderr = "";
  const exitCode = await new Promise<number>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
    child.once("error", reject);
    child.once("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  return { wallMs: Number(process.hrtime.bigint() - t0) / 1e6, exitCode, stderr: tail(stderr, 10) };
}
