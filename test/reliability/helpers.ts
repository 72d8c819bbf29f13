// Shared helpers for the reliability suite (issue 8): sizes (CI vs soak), a seeded PRNG, the
// generated 500-resource world with grants the stack does not own, a CLI runner that can kill its
// child at a chosen moment, the emulator admin API, live-world checks and the figures report.
//
// Sizes: the default is the CI size (the whole folder in about 3 minutes on 2 cores);
// CONVERGE_SOAK=1 (`npm run soak`) gives the full size. CONVERGE_RELIABILITY_SEED changes the
// base seed of every PRNG (the seed of a failing trial is printed with the failure).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import type { Binding, EmulatorWorld, Policy, State } from "../../src/generated/schemas.js";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = join(REPO, "bin", "converge.js");

if (!existsSync(join(REPO, "dist", "cli", "main.js"))) {
  throw new Error("dist/ is missing: run `npm run build` before the reliability tests (npm test does it in pretest)");
}

// --- sizes ---------------------------------------------------------------------------------

export const SOAK = process.env.CONVERGE_SOAK === "1";
export const MODE = SOAK ? "soak" : "ci";
export const BASE_SEED = Number(process.env.CONVERGE_RELIABILITY_SEED ?? 8_2025);

/** The CI size or the soak size of one figure. */
export function size(ci: number, soak: number): number {
  return SOAK ? soak : ci;
}

// --- PRNG ----------------------------------------------------------------------------------

/** mulberry32: tiny and reproducible; every random choice of the suite comes from one of these. */
export function prng(seed: number): Rng {
  // murmur3's finaliser first: mulberry32's first outputs for nearby seeds are nearly equal.
  let a = seed >>> 0;
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a = Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  a = (a ^ (a >>> 16)) >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

export interface Rng {
  /** [0, 1) */
  next(): number;
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
}

// --- the generated world -------------------------------------------------------------------

export const PROJECT = "rel-project";
export const LOCATION = "us-central1";
export const RESTORE_PLANS = 25;
export const ENDPOINTS = 25;
/** Resources per object: 50 objects × 10 = 500 resources. */
export const PER_OBJECT = 10;
export const TOTAL_RESOURCES = (RESTORE_PLANS + ENDPOINTS) * PER_OBJECT;

export const BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
export const MEMBER = "cloudnative:aiplatform/v1beta1:EndpointIamMember";

export const rpName = (i: number) => `projects/${PROJECT}/locations/${LOCATION}/restorePlans/rp-${i}`;
export const epName = (i: number) => `projects/${PROJECT}/locations/${LOCATION}/endpoints/ep-${i}`;
export const ALL_OBJECTS = [
  ...Array.from({ length: RESTORE_PLANS }, (_, i) => rpName(i)),
  ...Array.from({ length: ENDPOINTS }, (_, i) => epName(i)),
];

/** The condition of the foreign conditional binding on each restore plan (same role as a managed binding). */
export const FOREIGN_CONDITION = {
  title: "foreign-until-2030",
  description: "not managed by the stack",
  expression: 'request.time < timestamp("2030-01-01T00:00:00Z")',
};

/** One grant: a member in the binding of (object, role, condition title). */
export interface Grant {
  object: string;
  role: string;
  condition?: string;
  member: string;
}

/**
 * The starting world: 25 restore plans and 25 endpoints, each carrying grants the stack does not
 * own: another role; on restore plans a conditional binding of a role the stack manages
 * unconditionally; on endpoints other members of the very roles the stack's member resources
 * add to. Every policy also has an auditConfig. `projects` may add callers/iamAdmins.
 */
export function seedWorld(
  projects: EmulatorWorld["projects"] = { [PROJECT]: { number: "200000000001" } },
): EmulatorWorld {
  const audit = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" as const }] }];
  return {
    projects,
    restorePlans: Array.from({ length: RESTORE_PLANS }, (_, i) => ({
      name: rpName(i),
      policy: {
        version: 3,
        bindings: [
          { role: "roles/foreign.owner", members: [`user:owner-${i}@example.com`] },
          { role: "roles/rel.role0", members: [`user:cond-${i}@example.com`], condition: FOREIGN_CONDITION },
        ],
        auditConfigs: audit,
      },
    })),
    endpoints: Array.from({ length: ENDPOINTS }, (_, i) => ({
      name: epName(i),
      policy: {
        bindings: [
          { role: "roles/foreign.owner", members: [`user:owner-${i}@example.com`] },
          { role: "roles/rel.invoker0", members: [`user:foreign-${i}@example.com`] },
          { role: "roles/rel.invoker1", members: [`group:foreign-${i}@example.com`] },
        ],
      },
    })),
  };
}

/** Every grant of the seed world: none of them is owned by any variant of the stack. */
export function foreignGrants(world: EmulatorWorld = seedWorld()): Grant[] {
  const out: Grant[] = [];
  for (const o of [...(world.restorePlans ?? []), ...(world.endpoints ?? [])]) {
    for (const b of o.policy?.bindings ?? [])
      for (const m of b.members)
        out.push({ object: o.name, role: b.role, ...(b.condition ? { condition: b.condition.title } : {}), member: m });
  }
  return out;
}

export type Variant = "base" | "changed" | "shrunk" | "moved";

interface DesiredBinding {
  address: string;
  object: string;
  role: string;
  members: string[];
}
interface DesiredMember {
  address: string;
  object: string;
  role: string;
  member: string;
}
export interface Desired {
  bindings: DesiredBinding[];
  members: DesiredMember[];
}

/**
 * The stack's resources. base: 250 bindings (10 roles on each restore plan) and 250 members
 * (10 service accounts over 2 roles on each endpoint). changed: on every object one resource
 * differs (a binding's members: update; a member: replace). shrunk: the last 2 resources of every
 * object are gone (100 deletes). moved: every restore plan's last binding moves to the next
 * restore plan under a role of its own (25 replacements across objects: grant there, then revoke
 * here).
 */
export function desired(variant: Variant): Desired {
  const keep = (j: number) => variant !== "shrunk" || j < PER_OBJECT - 2;
  const bindings: DesiredBinding[] = [];
  const members: DesiredMember[] = [];
  for (let i = 0; i < RESTORE_PLANS; i++) {
    for (let j = 0; j < PER_OBJECT; j++) {
      if (!keep(j)) continue;
      const alt = variant === "changed" && j === i % PER_OBJECT ? "b" : "a";
      const ms = [`group:team${j}@example.com`, `user:u${i}-${j}-${alt}@example.com`];
      if (variant === "moved" && j === PER_OBJECT - 1)
        bindings.push({
          address: `rp${i}_b${j}`,
          object: rpName((i + 1) % RESTORE_PLANS),
          role: `roles/rel.moved${i}`,
          members: ms,
        });
      else bindings.push({ address: `rp${i}_b${j}`, object: rpName(i), role: `roles/rel.role${j}`, members: ms });
    }
  }
  for (let i = 0; i < ENDPOINTS; i++) {
    for (let j = 0; j < PER_OBJECT; j++) {
      if (!keep(j)) continue;
      const alt = variant === "changed" && j === i % PER_OBJECT ? "-new" : "";
      members.push({
        address: `ep${i}_m${j}`,
        object: epName(i),
        role: `roles/rel.invoker${j % 2}`,
        member: `serviceAccount:sa${i}-${j}${alt}@${PROJECT}.iam.gserviceaccount.com`,
      });
    }
  }
  return { bindings, members };
}

/** The stack YAML of a variant (short names, completed from the provider's project/location). */
export function stackYaml(variant: Variant, name = "rel", opts: { objects?: number } = {}): string {
  const d = desired(variant);
  if (opts.objects !== undefined) {
    // Only the resources of the first N restore plans and N endpoints (N × 20 resources).
    const keep = new Set([
      ...Array.from({ length: opts.objects }, (_, i) => rpName(i)),
      ...Array.from({ length: opts.objects }, (_, i) => epName(i)),
    ]);
    d.bindings = d.bindings.filter((b) => keep.has(b.object));
    d.members = d.members.filter((m) => keep.has(m.object));
  }
  const out = [`name: ${name}`, "provider:", `  project: ${PROJECT}`, `  location: ${LOCATION}`, "resources:"];
  const short = (full: string) => full.split("/").slice(-1)[0]!;
  for (const b of d.bindings) {
    out.push(
      `  ${b.address}:`,
      `    type: ${BINDING}`,
      "    properties:",
      `      name: ${short(b.object)}`,
      `      role: ${b.role}`,
      `      members: [${b.members.join(", ")}]`,
    );
  }
  for (const m of d.members) {
    out.push(
      `  ${m.address}:`,
      `    type: ${MEMBER}`,
      "    properties:",
      `      name: ${short(m.object)}`,
      `      role: ${m.role}`,
      `      member: ${m.member}`,
    );
  }
  return out.join("\n") + "\n";
}

// --- live world ----------------------------------------------------------------------------

export type LiveWorld = Map<string, Policy>;

export async function liveWorld(emu: RunningEmulator): Promise<LiveWorld> {
  const w = await admin<EmulatorWorld>(emu, "GET", "world");
  const out: LiveWorld = new Map();
  for (const o of [...(w.restorePlans ?? []), ...(w.endpoints ?? [])]) out.set(o.name, o.policy ?? { bindings: [] });
  return out;
}

const norm = (m: string) => {
  const i = m.indexOf(":");
  return i < 0 || m.startsWith("principal") ? m : m.slice(0, i + 1) + m.slice(i + 1).toLowerCase();
};

export function bindingOf(p: Policy | undefined, role: string, condition?: string): Binding | undefined {
  return p?.bindings?.find((b) => b.role === role && (b.condition?.title ?? undefined) === condition);
}

export function hasGrant(live: LiveWorld, g: Grant): boolean {
  const b = bindingOf(live.get(g.object), g.role, g.condition);
  return !!b && b.members.map(norm).includes(norm(g.member));
}

/** The objects seeded with auditConfigs: the restore plans (aiplatform v1beta1's Policy has none). */
const AUDITED_OBJECTS = ALL_OBJECTS.filter((o) => o.includes("/restorePlans/"));

/** How many foreign items one lostForeign() call checks: every foreign grant plus each policy's auditConfigs. */
export const FOREIGN_ITEMS = foreignGrants().length + AUDITED_OBJECTS.length;

/** The foreign grants (and auditConfigs) missing from the live world: must always be empty. */
export function lostForeign(live: LiveWorld, foreign: Grant[] = foreignGrants()): string[] {
  const lost = foreign
    .filter((g) => !hasGrant(live, g))
    .map((g) => `${g.object} ${g.role}${g.condition ? ` [${g.condition}]` : ""} ${g.member}`);
  for (const name of AUDITED_OBJECTS) if (!live.get(name)?.auditConfigs?.length) lost.push(`${name} auditConfigs`);
  return lost;
}

const VARIANTS: readonly Variant[] = ["base", "changed", "shrunk", "moved"];

/** How the live world differs from a variant's desired grants ([] = converged). */
export function divergence(live: LiveWorld, variant: Variant | "destroyed"): string[] {
  const out: string[] = [];
  const d = variant === "destroyed" ? { bindings: [], members: [] } : desired(variant);
  const sameSet = (a: string[], b: string[]) =>
    a.length === b.length && a.map(norm).every((x) => b.map(norm).includes(x));
  // Every (object, role) a binding resource of any variant manages.
  const keys = new Map<string, { object: string; role: string }>();
  for (const v of VARIANTS) for (const b of desired(v).bindings) keys.set(`${b.object} ${b.role}`, b);
  for (const { object, role } of keys.values()) {
    const want = d.bindings.find((b) => b.object === object && b.role === role);
    const have = bindingOf(live.get(object), role);
    if (want && !(have && sameSet(have.members, want.members)))
      out.push(`${object} ${role}: want ${want.members.join(",")}, have ${have?.members.join(",") ?? "none"}`);
    if (!want && have) out.push(`${object} ${role}: should be gone, have ${have.members.join(",")}`);
  }
  const all = VARIANTS.flatMap((v) => desired(v).members);
  for (const m of all) {
    const wanted = d.members.some((x) => x.object === m.object && x.role === m.role && x.member === m.member);
    const present = hasGrant(live, { object: m.object, role: m.role, member: m.member });
    if (wanted !== present) out.push(`${m.object} ${m.role} ${m.member}: ${wanted ? "missing" : "should be gone"}`);
  }
  return [...new Set(out)];
}

/**
 * Resources the state claims that the cloud does not have. The state may lag behind the cloud
 * (a write done, its save not yet), never lead it. `target` is what the interrupted command was
 * converging to: a grant that already matches the target (cloud ahead) is fine.
 */
export function stateLeads(state: State, live: LiveWorld, target: Variant | "destroyed"): string[] {
  const d = target === "destroyed" ? { bindings: [], members: [] } : desired(target);
  const out: string[] = [];
  for (const r of state.resources) {
    const inp = r.inputs as { name: string; role: string; members?: string[]; member?: string };
    if (r.type === BINDING) {
      const matches = (object: string, role: string, ms: string[]) => {
        const b = bindingOf(live.get(object), role);
        return !!b && b.members.length === ms.length && ms.every((m) => b.members.map(norm).includes(norm(m)));
      };
      const have = bindingOf(live.get(inp.name), inp.role);
      const want = d.bindings.find((b) => b.address === r.address);
      const ok =
        matches(inp.name, inp.role, inp.members ?? []) ||
        (want ? matches(want.object, want.role, want.members) : !have);
      if (!ok)
        out.push(
          `${r.address}: state says ${inp.role} = ${(inp.members ?? []).join(",")} on ` +
            `${inp.name}; live ${have?.members.join(",") ?? "none"}`,
        );
    } else {
      const present = hasGrant(live, { object: inp.name, role: inp.role, member: inp.member! });
      const want = d.members.find((m) => m.address === r.address);
      const ok =
        present || (want ? hasGrant(live, { object: want.object, role: want.role, member: want.member }) : true);
      if (!ok) out.push(`${r.address}: state says ${inp.member} has ${inp.role} on ${inp.name}; live does not`);
    }
  }
  return out;
}

// --- emulator ------------------------------------------------------------------------------

export function startWorld(seed: EmulatorWorld, opts: { dataFile?: string } = {}): Promise<RunningEmulator> {
  return startEmulator({ seed, port: 0, host: "127.0.0.1", ...opts });
}

export async function admin<T>(emu: RunningEmulator, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${emu.url}/__emulator/${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`emulator admin ${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

export interface EmulatorStats {
  requests: Record<string, number>;
  responses: Record<string, Record<string, number>>;
}

export const stats = (emu: RunningEmulator) => admin<EmulatorStats>(emu, "GET", "stats");
export const resetStats = (emu: RunningEmulator) => admin<unknown>(emu, "POST", "stats/reset");
export const setFaults = (emu: RunningEmulator, f: Record<string, unknown>) => admin<unknown>(emu, "POST", "faults", f);
export const clearFaults = (emu: RunningEmulator) => admin<unknown>(emu, "DELETE", "faults");

export const totalRequests = (s: EmulatorStats) => Object.values(s.requests).reduce((a, b) => a + b, 0);

/** Responses with this canonical code, over every method. */
export function responses(s: EmulatorStats, code: string): number {
  return Object.values(s.responses).reduce((a, r) => a + (r[code] ?? 0), 0);
}

const SET_METHODS = [
  "gkebackup.projects.locations.restorePlans.setIamPolicy",
  "aiplatform.projects.locations.endpoints.setIamPolicy",
];
/** setIamPolicy calls that succeeded. */
export const okWrites = (s: EmulatorStats) => SET_METHODS.reduce((a, m) => a + (s.responses[m]?.OK ?? 0), 0);

/** A raw read-modify-write through the public API (as gcloud does), retried on 409 ABORTED. */
export async function foreignEdit(
  emu: RunningEmulator,
  name: string,
  edit: (p: Policy) => Policy,
  headers: Record<string, string> = {},
): Promise<{ attempts: number }> {
  const isEndpoint = name.includes("/endpoints/");
  const prefix = isEndpoint ? "v1beta1" : "v1";
  for (let attempt = 1; attempt <= 200; attempt++) {
    const get = await fetch(`${emu.url}/${prefix}/${name}:getIamPolicy?options.requestedPolicyVersion=3`, {
      method: isEndpoint ? "POST" : "GET",
      headers,
    });
    if (!get.ok) throw new Error(`getIamPolicy ${name}: ${get.status} ${await get.text()}`);
    const current = (await get.json()) as Policy;
    const set = await fetch(`${emu.url}/${prefix}/${name}:setIamPolicy`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ policy: edit(structuredClone(current)) }),
    });
    if (set.ok) return { attempts: attempt };
    const text = await set.text();
    if (set.status !== 409) throw new Error(`setIamPolicy ${name}: ${set.status} ${text}`);
    await new Promise((r) => setTimeout(r, Math.random() * 10));
  }
  throw new Error(`setIamPolicy ${name}: 200 conflicts in a row`);
}

/** Adds `member` to the binding of (role, condition), creating it; a condition makes the policy version 3. */
export function addMember(
  p: Policy,
  role: string,
  member: string,
  condition?: { title: string; expression: string },
): Policy {
  const b = p.bindings?.find((x) => x.role === role && (x.condition?.title ?? undefined) === condition?.title);
  if (b) {
    if (!b.members.includes(member)) b.members.push(member);
  } else (p.bindings ??= []).push({ role, members: [member], ...(condition ? { condition } : {}) });
  if (condition) p.version = 3;
  return p;
}

// --- CLI -----------------------------------------------------------------------------------

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CliOptions {
  cwd: string;
  emulator?: RunningEmulator;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Called with each complete stdout line (streamed JSON events with --json). */
  onLine?: (line: string, index: number) => void;
  /** Shell umask for the child (e.g. "000"): runs it through /bin/sh. */
  umask?: string;
}

export interface Running {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/** Starts `node bin/converge.js ...args`. */
export function startCli(args: string[], o: CliOptions): Running {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", ...o.env };
  delete env.FORCE_COLOR;
  if (o.emulator) env.CLOUDNATIVE_EMULATOR_HOST = o.emulator.hostPort;
  else if (!o.env?.CLOUDNATIVE_EMULATOR_HOST) delete env.CLOUDNATIVE_EMULATOR_HOST;
  if (!o.env || !("CLOUDNATIVE_ACCESS_TOKEN" in o.env)) delete env.CLOUDNATIVE_ACCESS_TOKEN;
  delete env.GOOGLE_OAUTH_ACCESS_TOKEN;
  const t0 = Date.now();
  const child = o.umask
    ? spawn("/bin/sh", ["-c", `umask ${o.umask} && exec "$0" "$@"`, process.execPath, BIN, ...args], {
        cwd: o.cwd,
        env: env as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn(process.execPath, [BIN, ...args], {
        cwd: o.cwd,
        env: env as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
      });
  const done = new Promise<CliResult>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    let partial = "";
    let lines = 0;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (!o.onLine) return;
      partial += d;
      let nl: number;
      while ((nl = partial.indexOf("\n")) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        o.onLine(line, lines++);
      }
    });
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
  return { child, done };
}

export function runCli(args: string[], o: CliOptions): Promise<CliResult> {
  return startCli(args, o).done;
}

/** Fails with the whole output when the exit code is not the expected one. */
export function expectExit(r: CliResult, code: number, what = ""): void {
  if (r.code !== code) {
    throw new Error(
      `${what ? what + ": " : ""}expected exit ${code}, got ${r.code} (signal ${r.signal})\n--- stdout ` +
        `(tail)\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}`,
    );
  }
}

// --- files and figures ---------------------------------------------------------------------

export async function tempDir(prefix = "converge-rel-"): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh working folder with an empty state/ for each test, removed after it. Read `ws.dir`
 * inside tests; `ws.writeStack(v)` writes variant v as its stack.yaml.
 */
export function useStackDir(): { readonly dir: string; writeStack(v: Variant): void } {
  let ws: { dir: string; remove: () => Promise<void> } | undefined;
  beforeEach(async () => {
    ws = await tempDir();
    mkdirSync(join(ws.dir, "state"));
  });
  afterEach(async () => {
    await ws?.remove();
    ws = undefined;
  });
  const dir = () => {
    if (!ws) throw new Error("the working folder is made in beforeEach");
    return ws.dir;
  };
  return {
    get dir() {
      return dir();
    },
    writeStack: (v) => writeFileSync(join(dir(), "stack.yaml"), stackYaml(v)),
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Where each test file writes its figures (CONVERGE_RELIABILITY_OUT, default a temp folder). */
export const FIGURES_DIR = process.env.CONVERGE_RELIABILITY_OUT ?? join(tmpdir(), `converge-reliability-${MODE}`);

/** Records the figures of one area (merged into {FIGURES_DIR}/{area}.json) and prints them. */
export function recordFigures(area: string, figures: Record<string, unknown>): void {
  mkdirSync(FIGURES_DIR, { recursive: true });
  const file = join(FIGURES_DIR, `${area}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      { area, mode: MODE, baseSeed: BASE_SEED, finishedAt: new Date().toISOString(), ...figures },
      null,
      2,
    ) + "\n",
  );
  console.log(`[reliability ${MODE}] ${area}: ${JSON.stringify(figures)}`);
}
