// Extra helpers for the apply/destroy/refresh/output end-to-end tests (issue 4), on top of the
// shared ./helpers.ts: emulator faults and stats by method, a raw etag read-modify-write client,
// stack builders and a pseudo-terminal driver (util-linux `script`) for the approval prompt.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { FaultConfig } from "../../src/emulator/faults.js";
import type { Binding, EmulatorWorld, Policy, State, UiEvent } from "../../src/generated/schemas.js";
import { describeErrors, validate } from "../../src/schemas/index.js";
import { decodeLogMessage } from "../support/terraform-json-decoder.js";
import { GET_EP, GET_FED, GET_RP, SET_EP, SET_RP } from "../support/emulator.js";
import { BIN, readThenSetPolicy, stats, type EmulatorStats } from "./helpers.js";
import xterm from "@xterm/headless";

const { Terminal } = xterm;

export const M = { rpGet: GET_RP, rpSet: SET_RP, epGet: GET_EP, epSet: SET_EP, fedGet: GET_FED } as const;

export const BINDING_T = "cloudnative:backup/v1:RestorePlanIamBinding";
export const MEMBER_T = "cloudnative:aiplatform/v1beta1:EndpointIamMember";

export const rp = (id: string) => `projects/my-project/locations/us-central1/restorePlans/${id}`;
export const ep = (id: string) => `projects/my-project/locations/us-central1/endpoints/${id}`;

export const count = (s: EmulatorStats, method: string): number => s.requests[method] ?? 0;
export const setCalls = (s: EmulatorStats): number => count(s, M.rpSet) + count(s, M.epSet);
export const getCalls = (s: EmulatorStats): number => count(s, M.rpGet) + count(s, M.epGet);
/** Responses of one method with one canonical status (e.g. "ABORTED" for 409). */
export const responses = (s: EmulatorStats, method: string, status: string): number =>
  s.responses?.[method]?.[String(status)] ?? 0;

export async function setFaults(emu: RunningEmulator, faults: FaultConfig): Promise<void> {
  const res = await fetch(`${emu.url}/__emulator/faults`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(faults),
  });
  if (!res.ok) throw new Error(`faults: ${res.status} ${await res.text()}`);
}

export async function clearFaults(emu: RunningEmulator): Promise<void> {
  const res = await fetch(`${emu.url}/__emulator/faults`, { method: "DELETE" });
  if (!res.ok) throw new Error(`faults: ${res.status} ${await res.text()}`);
}

export async function setCallsNow(emu: RunningEmulator): Promise<number> {
  return setCalls(await stats(emu));
}

/** One round of a raw read-modify-write through the public REST API; false on 409 ABORTED. */
export async function rawReadModifyWrite(
  emu: RunningEmulator,
  name: string,
  edit: (p: Policy) => Policy,
): Promise<boolean> {
  const set = await readThenSetPolicy(emu, name, edit);
  if (set.status === 409) {
    await set.text();
    return false;
  }
  if (!set.ok) throw new Error(`setIamPolicy ${name}: ${set.status} ${await set.text()}`);
  await set.text();
  return true;
}

/** Adds `member` to `role` (creating the binding) in a policy copy. */
export function addMember(p: Policy, role: string, member: string): Policy {
  const bindings = p.bindings ?? [];
  const b = bindings.find((x) => x.role === role && !x.condition);
  if (b) b.members = [...b.members, member];
  else bindings.push({ role, members: [member] });
  return { ...p, bindings };
}

/** Unconditional members of a role, sorted ([] when the binding is absent). */
export function membersOf(p: Policy | undefined, role: string, conditionTitle?: string): string[] {
  const b = (p?.bindings ?? []).find(
    (x: Binding) =>
      x.role === role && (conditionTitle === undefined ? !x.condition : x.condition?.title === conditionTitle),
  );
  return b ? [...b.members].sort() : [];
}

/** Bindings as comparable data: sorted by role/condition, members sorted, empty ones dropped. */
export function normalBindings(p: Policy | undefined): Binding[] {
  return (p?.bindings ?? [])
    .filter((b) => b.members.length > 0)
    .map((b) => ({ ...b, members: [...b.members].sort() }))
    .sort((a, b) => `${a.role} ${a.condition?.title ?? ""}`.localeCompare(`${b.role} ${b.condition?.title ?? ""}`));
}

export function policyIn(w: EmulatorWorld, name: string): Policy | undefined {
  return [...(w.restorePlans ?? []), ...(w.endpoints ?? [])].find((o) => o.name === name)?.policy;
}

export async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, "utf8")) as T;
}

export async function readStateFile(path: string): Promise<State> {
  return readJson<State>(path);
}

export function stateExists(path: string): boolean {
  return existsSync(path);
}

/**
 * The messages of a streamed --json output (apply, destroy, plan --json-stream), one per line,
 * each checked against schemas/events.schema.json and decoded as terraform-json decodes a line of
 * Terraform's machine-readable UI (a line that fails either throws, naming it).
 */
export function uiEvents(stdout: string): UiEvent[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((line, i) => {
      const e = JSON.parse(line) as UiEvent;
      const errors = validate("events.schema.json", e);
      if (errors.length)
        throw new Error(
          `line ${i + 1} does not match schemas/events.schema.json: ${describeErrors(errors.slice(0, 3))}\n${line}`,
        );
      decodeLogMessage(line);
      return e;
    });
}

/** A stack document header for the my-project/us-central1 defaults. */
export function stackHead(name: string): string {
  return `name: ${name}\nprovider:\n  project: my-project\n  location: us-central1\nresources:\n`;
}

export function bindingYaml(address: string, name: string, role: string, members: string[], extra = ""): string {
  return (
    `  ${address}:\n    type: ${BINDING_T}\n    properties:\n      name: ${name}\n      ` +
    `role: ${role}\n      members: [${members.join(", ")}]\n${extra}`
  );
}

export function memberYaml(address: string, name: string, role: string, member: string, extra = ""): string {
  return (
    `  ${address}:\n    type: ${MEMBER_T}\n    properties:\n      name: ${name}\n   ` +
    `   role: ${role}\n      member: ${member}\n${extra}`
  );
}

/** viewers: bob and Alice (as users type her) on the nightly restore plan. */
export const NIGHTLY_VIEWERS = bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", [
  "user:bob@example.com",
  "user:Alice@example.com",
]);
/** invoker: dana on the churn endpoint, after viewers. */
export const DANA_INVOKER = memberYaml(
  "invoker",
  "churn",
  "roles/aiplatform.user",
  "user:dana@example.com",
  "    options:\n      dependsOn: [viewers]\n",
);

// --- pseudo-terminal driver -------------------------------------------------------------------

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[()][0-9A-Za-z]|\u001b[=>78]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, "").replace(/\r/g, "");
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface PtySession {
  /** Everything printed so far, ANSI sequences and CRs removed. */
  text(): string;
  /** Waits until `needle` appears at or after `from` in text(); resolves the index just past it. */
  waitFor(needle: string, from?: number, timeoutMs?: number): Promise<number>;
  /** Types a word then Enter, as a person at the terminal would. */
  answer(word: string): Promise<void>;
  /** Types keys without Enter ("\x03" is Ctrl-C). */
  type(keys: string): void;
  /** What a terminal of the session's size shows now (its scrollback too): the output replayed
   *  through a terminal emulator, so that lines redrawn or erased in place read as a person sees them. */
  screen(): Promise<string>;
  exit: Promise<number | null>;
  kill(): void;
}

/**
 * Runs `node bin/converge.js ...args` inside a pseudo-terminal made by util-linux `script`.
 * The pty gets a real size (stty), otherwise ink renders into a 0-column terminal.
 */
export function runInPty(
  args: string[],
  o: { cwd: string; emulator?: RunningEmulator; timeoutMs?: number; env?: Record<string, string>; cols?: number },
): PtySession {
  const env: Record<string, string | undefined> = { ...process.env, TERM: "xterm" };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  delete env.CI;
  delete env.CONTINUOUS_INTEGRATION;
  Object.assign(env, o.env);
  if (o.emulator) env.CLOUDNATIVE_EMULATOR_HOST = o.emulator.hostPort;
  else delete env.CLOUDNATIVE_EMULATOR_HOST;
  const cmd =
    `stty cols ${o.cols ?? 160} rows 60 && exec ` + `${[process.execPath, BIN, ...args].map(shellQuote).join(" ")}`;
  const child: ChildProcessWithoutNullStreams = spawn("/usr/bin/script", ["-qfec", cmd, "/dev/null"], {
    cwd: o.cwd,
    env: env as NodeJS.ProcessEnv,
  });
  let raw = "";
  child.stdout.on("data", (d: Buffer) => (raw += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (raw += d.toString("utf8")));
  const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
  let exited = false;
  const exit = new Promise<number | null>((res) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      exited = true;
      res(code);
    }),
  );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const text = () => stripAnsi(raw);
  const waitFor = async (needle: string, from = 0, timeoutMs = 60_000): Promise<number> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = text();
      const i = t.indexOf(needle, from);
      if (i >= 0) return i + needle.length;
      if (exited || Date.now() > deadline)
        throw new Error(
          `"${needle}" did not appear after offset ${from}${exited ? " (the process exited)" : ""}; output:\n${t}`,
        );
      await sleep(50);
    }
  };
  const answer = async (word: string) => {
    // Give ink a moment to switch the terminal to raw mode, then type like a person.
    await sleep(300);
    child.stdin.write(word);
    await sleep(150);
    child.stdin.write("\r");
  };
  // Keystrokes as they are, no Enter (Ctrl-C is "\x03").
  const type = (keys: string) => void child.stdin.write(keys);
  const screen = () => terminalScreen(raw, o.cols ?? 160, 60);
  return { text, waitFor, answer, type, screen, exit, kill: () => child.kill("SIGKILL") };
}

export const PROMPT = "Do you want to perform these actions?";

/** The lines a `cols` × `rows` terminal (with its scrollback) shows after receiving `output`. */
async function terminalScreen(output: string, cols: number, rows: number): Promise<string> {
  const term = new Terminal({ cols, rows, scrollback: 10_000, allowProposedApi: true });
  await new Promise<void>((done) => term.write(output, done));
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
  term.dispose();
  return lines.join("\n").trimEnd();
}

/** Resolves once every API request the emulator received has been answered (or its answer lost):
 *  the writes of a killed client still in the emulator's latency have landed by then. Polls; the
 *  interval decides nothing. */
export async function untilQuiet(emu: RunningEmulator): Promise<void> {
  for (;;) {
    const s = await stats(emu);
    const open = Object.entries(s.requests).some(
      ([m, n]) =>
        n >
        Object.values(s.responses?.[m] ?? {}).reduce((a, b) => a + b, 0) +
          ((s as { lostResponses?: Record<string, Record<string, number>> }).lostResponses?.[m]?.reset ?? 0),
    );
    if (!open) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
