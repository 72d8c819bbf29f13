// The emulator runs in its own process, so that the CLI's CPU time and peak RSS are measured alone.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

export interface EmulatorStats {
  requests: Record<string, number>;
  responses: Record<string, Record<string, number>>;
}

export interface BenchEmulator {
  /** "127.0.0.1:PORT", for CLOUDNATIVE_EMULATOR_HOST */
  hostPort: string;
  /** Resets the world to the seed, the stats and the faults. */
  reset(): Promise<void>;
  resetStats(): Promise<void>;
  stats(): Promise<EmulatorStats>;
  /** Added latency per request (0 clears the faults). */
  setLatency(ms: number): Promise<void>;
  /** Any fault configuration (`POST /__emulator/faults`), e.g. {quotas: {"gkebackup.write": 600}}. */
  setFaults(config: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
  /** Settles with why the emulator process ended if it ends before stop() (a crash): the CLI run
   *  in flight is then stopped and the scenario fails with this text. */
  readonly crashed: Promise<string>;
}

export async function startBenchEmulator(bin: string, seedFile: string): Promise<BenchEmulator> {
  const child: ChildProcess = spawn(process.execPath, [bin, "emulator", "start", "--port", "0", "--seed", seedFile], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  // Keep the tail only: at 100,000 resources a long run must not grow the harness's memory.
  child.stderr!.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-20_000)));
  let stopping = false;
  const crashed = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      if (!stopping)
        resolve(
          `the emulator exited (code ${code}, signal ${signal}); its stderr ends: ` +
            `${stderr.trim().split("\n").slice(-15).join("\n")}`,
        );
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        child.stdout!.off("data", onData);
        child.stdout!.resume();
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`the emulator exited (code ${code}) before listening: ${stderr.trim()}`)),
    );
  });
  const admin = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}/__emulator/${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`emulator admin ${method} ${path}: HTTP ${res.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    hostPort: url.replace(/^http:\/\//, ""),
    reset: async () => void (await admin("POST", "reset")),
    resetStats: async () => void (await admin("POST", "stats/reset")),
    setFaults: async (config) => void (await admin("POST", "faults", config)),
    stats: async () => (await admin("GET", "stats")) as EmulatorStats,
    setLatency: async (ms) =>
      void (ms > 0 ? await admin("POST", "faults", { latencyMs: ms }) : await admin("DELETE", "faults")),
    crashed,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Sums the stats into reads, writes and non-OK responses (retried or failed calls). */
export function summarizeStats(s: EmulatorStats): {
  reads: number;
  writes: number;
  other: number;
  notOk: number;
  byMethod: Record<string, number>;
  notOkByStatus: Record<string, number>;
} {
  let reads = 0;
  let writes = 0;
  let other = 0;
  const byMethod: Record<string, number> = {};
  for (const [m, n] of Object.entries(s.requests)) {
    if (n === 0) continue;
    byMethod[m] = n;
    if (m.endsWith(".getIamPolicy")) reads += n;
    else if (m.endsWith(".setIamPolicy")) writes += n;
    else other += n;
  }
  let notOk = 0;
  const notOkByStatus: Record<string, number> = {};
  for (const statuses of Object.values(s.responses)) {
    for (const [status, n] of Object.entries(statuses)) {
      if (status === "OK" || status === "200") continue;
      notOk += n;
      notOkByStatus[status] = (notOkByStatus[status] ?? 0) + n;
    }
  }
  return { reads, writes, other, notOk, byMethod, notOkByStatus };
}
