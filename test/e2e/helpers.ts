// Shared helpers for end-to-end tests: run the built CLI (bin/converge.js → dist/) as a child
// process, start seeded emulators on 127.0.0.1 port 0, read their admin API, temp dirs.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld, Policy, State } from "../../src/generated/schemas.js";
import { useFileEmulator } from "../support/emulator.js";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = join(REPO, "bin", "converge.js");

if (!existsSync(join(REPO, "dist", "cli", "main.js"))) {
  throw new Error("dist/ is missing: run `npm run build` before the end-to-end tests (npm test does it in pretest)");
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /**
   * The emulator the CLI talks to (CLOUDNATIVE_EMULATOR_HOST); omitted = the variable is unset, unless `env` sets it.
   */
  emulator?: RunningEmulator;
  /** CLOUDNATIVE_EMULATOR_HOST as given (a hostile server's address, a malformed value); wins over `emulator`. */
  emulatorHost?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** The child's umask (e.g. "000"): it then runs through /bin/sh. */
  umask?: string;
  /** Node options before the CLI's script (e.g. ["--import", file]); worker threads inherit them. */
  nodeFlags?: string[];
}

/** Runs `node bin/converge.js ...args` and collects its output and exit code. */
export function runCli(args: string[], o: RunOptions = {}): Promise<CliResult> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", ...o.env };
  delete env.FORCE_COLOR;
  if (o.emulatorHost !== undefined) env.CLOUDNATIVE_EMULATOR_HOST = o.emulatorHost;
  else if (o.emulator) env.CLOUDNATIVE_EMULATOR_HOST = o.emulator.hostPort;
  else if (o.env?.CLOUDNATIVE_EMULATOR_HOST === undefined) delete env.CLOUDNATIVE_EMULATOR_HOST;
  return new Promise((resolve, reject) => {
    const node = [...(o.nodeFlags ?? []), BIN, ...args];
    const [cmd, argv]: [string, string[]] = o.umask
      ? ["/bin/sh", ["-c", `umask ${o.umask} && exec "$0" "$@"`, process.execPath, ...node]]
      : [process.execPath, node];
    const child = spawn(cmd, argv, {
      cwd: o.cwd ?? REPO,
      env: env as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    // A budget against a hung process, not a measure of speed: a loaded machine runs a CLI slowly.
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A CLI process still running: its output so far, a wait for some text, and its end. */
export interface StartedCli {
  child: ChildProcess;
  /** stdout and stderr interleaved, as received so far. */
  output(): string;
  /** Resolves once `text` has been printed (rejects if the process ends first). */
  waitFor(text: string): Promise<void>;
  /** Resolves when the process has exited, with the time it did. */
  done: Promise<CliResult & { endedAt: number }>;
  /** `done`, after a SIGKILL if the process is still running `ms` from now (its result then says so). */
  doneWithin(ms: number): Promise<CliResult & { endedAt: number }>;
}

/** Starts `node bin/converge.js ...args` like runCli, for tests that act while it runs (signals). */
export function startCli(args: string[], o: RunOptions = {}): StartedCli {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", ...o.env };
  delete env.FORCE_COLOR;
  if (o.emulatorHost !== undefined) env.CLOUDNATIVE_EMULATOR_HOST = o.emulatorHost;
  else if (o.emulator) env.CLOUDNATIVE_EMULATOR_HOST = o.emulator.hostPort;
  else delete env.CLOUDNATIVE_EMULATOR_HOST;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: o.cwd ?? REPO,
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let all = "";
  let ended = false;
  const waiters: { text: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (!all.includes(w.text)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  child.stdout!.setEncoding("utf8").on("data", (d: string) => ((stdout += d), (all += d), check()));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => ((stderr += d), (all += d), check()));
  const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
  const done = new Promise<CliResult & { endedAt: number }>((resolve, reject) => {
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      ended = true;
      for (const w of waiters.splice(0))
        w.reject(
          new Error(`"${w.text}" was not printed before the process ended (code ${code}, signal ${signal}):\n${all}`),
        );
      resolve({ code, signal, stdout, stderr, endedAt: Date.now() });
    });
  });
  const waitFor = (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (all.includes(text)) resolve();
      else if (ended) reject(new Error(`"${text}" was not printed before the process ended:\n${all}`));
      else waiters.push({ text, resolve, reject });
    });
  const doneWithin = (ms: number) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), ms);
    return done.finally(() => clearTimeout(kill));
  };
  return { child, output: () => all, waitFor, done, doneWithin };
}

/** Fails with the whole output when the exit code is not the expected one. */
export function expectExit(r: CliResult, code: number): void {
  if (r.code !== code)
    throw new Error(
      `expected exit ${code}, got ${r.code} (signal ${r.signal})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
}

export function startSeededEmulator(
  seed: EmulatorWorld,
  opts: { dataFile?: string; allowedHosts?: string[] } = {},
): Promise<RunningEmulator> {
  return startEmulator({ seed, port: 0, host: "127.0.0.1", ...opts });
}

export interface EmulatorStats {
  requests: Record<string, number>;
  responses?: Record<string, Record<string, number>>;
}

async function admin<T>(emu: RunningEmulator, method: "GET" | "POST", path: string): Promise<T> {
  const res = await fetch(`${emu.url}/__emulator/${path}`, { method });
  const text = await res.text();
  if (!res.ok) throw new Error(`emulator admin ${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

export const stats = (emu: RunningEmulator) => admin<EmulatorStats>(emu, "GET", "stats");
export const resetStats = (emu: RunningEmulator) => admin<unknown>(emu, "POST", "stats/reset");
export const world = (emu: RunningEmulator) => admin<EmulatorWorld>(emu, "GET", "world");

export function totalRequests(s: EmulatorStats): number {
  return Object.values(s.requests).reduce((a, b) => a + b, 0);
}

/** The live policy of a restore plan or endpoint, as the emulator holds it (no request counted). */
export async function livePolicy(emu: RunningEmulator, name: string): Promise<Policy> {
  const w = await world(emu);
  const o = [...(w.restorePlans ?? []), ...(w.endpoints ?? [])].find((x) => x.name === name);
  if (!o?.policy) throw new Error(`the emulator has no object ${name}`);
  return o.policy;
}

/** Reads the policy through the public API and sends the edited copy back; the caller reads the setIamPolicy answer. */
export async function readThenSetPolicy(
  emu: RunningEmulator,
  name: string,
  edit: (p: Policy) => Policy,
): Promise<Response> {
  const isEndpoint = name.includes("/endpoints/");
  const prefix = isEndpoint ? "v1beta1" : "v1";
  const get = await fetch(`${emu.url}/${prefix}/${name}:getIamPolicy?options.requestedPolicyVersion=3`, {
    method: isEndpoint ? "POST" : "GET",
  });
  if (!get.ok) throw new Error(`getIamPolicy ${name}: ${get.status} ${await get.text()}`);
  const current = (await get.json()) as Policy;
  return fetch(`${emu.url}/${prefix}/${name}:setIamPolicy`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ policy: edit(structuredClone(current)) }),
  });
}

/** A raw read-modify-write through the public API, as a human with gcloud would do it. */
export async function setPolicyOutOfBand(
  emu: RunningEmulator,
  name: string,
  edit: (p: Policy) => Policy,
): Promise<Policy> {
  const set = await readThenSetPolicy(emu, name, edit);
  if (!set.ok) throw new Error(`setIamPolicy ${name}: ${set.status} ${await set.text()}`);
  return (await set.json()) as Policy;
}

export async function tempDir(prefix = "converge-e2e-"): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeState(path: string, state: State): Promise<void> {
  await writeFile(path, JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
}

/** Lines printed like a stack trace ("    at fn (file:line:col)"); diagnostics indent "  at path" by two. */
export function stackTraceLines(text: string): string[] {
  return text.split("\n").filter((l) => /^\s{4,}at /.test(l) || /^\s*at .*\.(js|ts|mjs):\d+:\d+\)?$/.test(l));
}

/**
 * One temp directory for a test file (no emulator: the CLI's embedded one, or none), made before
 * its tests and removed after them. Read `ws.dir` inside tests (it exists once beforeAll ran).
 */
export function useTempDir(prefix: string): { readonly dir: string } {
  let ws: { dir: string; remove: () => Promise<void> } | undefined;
  beforeAll(async () => {
    ws = await tempDir(prefix);
  });
  afterAll(async () => {
    await ws?.remove();
  });
  return {
    get dir() {
      if (!ws) throw new Error("the workspace is made in beforeAll");
      return ws.dir;
    },
  };
}

/**
 * One seeded emulator and one temp directory for a test file, started before its tests and
 * removed after them. Read `ws.emu` and `ws.dir` inside tests (they exist once beforeAll ran).
 */
export function useEmulatorWorkspace(
  seed: EmulatorWorld,
  prefix: string,
): { readonly emu: RunningEmulator; readonly dir: string } {
  const tmp = useTempDir(prefix);
  // The same options as startSeededEmulator; useFileEmulator owns the beforeAll/afterAll.
  const emu = useFileEmulator({ seed, port: 0, host: "127.0.0.1" });
  return {
    emu,
    get dir() {
      return tmp.dir;
    },
  };
}

/**
 * useEmulatorWorkspace with a stack: `stack` is written as stack.yaml and an empty state/ made
 * before the file's own beforeAll hooks run; `statePath` is state/<stateFile> (not written).
 */
export function useStackWorkspace(
  seed: EmulatorWorld,
  prefix: string,
  stack: string,
  stateFile: string,
): { readonly emu: RunningEmulator; readonly dir: string; readonly stackFile: string; readonly statePath: string } {
  const ws = useEmulatorWorkspace(seed, prefix);
  beforeAll(async () => {
    await writeFile(join(ws.dir, "stack.yaml"), stack);
    await mkdir(join(ws.dir, "state"));
  });
  return {
    get emu() {
      return ws.emu;
    },
    get dir() {
      return ws.dir;
    },
    get stackFile() {
      return join(ws.dir, "stack.yaml");
    },
    get statePath() {
      return join(ws.dir, "state", stateFile);
    },
  };
}

/** "127.0.0.1:PORT" of a port nothing listens on (bound, then closed): connections are refused. */
export async function refusedHostPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}
