// Shared by the tests of commands stopped by an interrupt (a signal, a closed output): a large
// generated stack with its emulator, for interrupts while a plan is printed; GRANTS member
// resources on as many endpoints, each test with its own members, stack name and state (so that
// tests do not share grants), and the checks that what a stopped apply wrote is exactly what its
// state records.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { generate } from "../../bench/generate.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useTempDir, world } from "./helpers.js";
import { ep, membersOf, memberYaml, policyIn, readStateFile, stackHead } from "./apply-helpers.js";

export const GRANTS = 20;
export const ROLE = "roles/aiplatform.user";
const ids = Array.from({ length: GRANTS }, (_, i) => String(i).padStart(2, "0"));

/** GRANTS endpoints with empty policies. */
export const GRANTS_SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: ids.map((i) => ({ name: ep(`e${i}`), policy: { bindings: [] } })),
};

export interface GrantStack {
  stackFile: string;
  statePath: string;
  /** The CLI's options naming the stack and its state. */
  files: string[];
}

/** Writes the stack `tag`: a member resource m{i} granting user:{tag}-{i} on endpoint e{i}. */
export async function writeGrantStack(dir: string, tag: string): Promise<GrantStack> {
  const stackFile = join(dir, `${tag}.yaml`);
  const statePath = join(dir, `${tag}.json`);
  await writeFile(
    stackFile,
    stackHead(tag) + ids.map((i) => memberYaml(`m${i}`, `e${i}`, ROLE, `user:${tag}-${i}@example.com`)).join(""),
  );
  return { stackFile, statePath, files: ["-f", stackFile, "--state", statePath] };
}

/**
 * The state the stopped apply saved lists exactly the grants that are live (each written by
 * converge, none adopted) and no lock is left; returns the saved addresses.
 */
export async function expectSavedAsLive(emu: RunningEmulator, s: GrantStack, tag: string): Promise<string[]> {
  const live = await world(emu);
  const granted = ids
    .filter((i) => membersOf(policyIn(live, ep(`e${i}`)), ROLE).includes(`user:${tag}-${i}@example.com`))
    .map((i) => `m${i}`);
  const state = await readStateFile(s.statePath);
  const saved = state.resources.map((r) => r.address).sort();
  expect(saved).toEqual(granted);
  expect(state.resources.filter((r) => r.adopted).map((r) => r.address)).toEqual([]);
  expect(existsSync(`${s.statePath}.lock`)).toBe(false);
  return saved;
}

/** The next plan adopts nothing: it creates the grants the stopped apply did not make, only. */
export async function expectRestPlanned(
  emu: RunningEmulator,
  dir: string,
  s: GrantStack,
  saved: readonly string[],
): Promise<void> {
  const plan = await runCli(["plan", ...s.files], { cwd: dir, emulator: emu, timeoutMs: 60_000 });
  expectExit(plan, 0);
  expect(plan.stdout).not.toMatch(/adopt/i);
  const rest = GRANTS - saved.length;
  expect(plan.stdout).toContain(rest ? `Plan: 0 to import, ${rest} to add, 0 to change, 0 to destroy.` : "No changes.");
}

/**
 * A stack of `n` resources made by bench/generate.ts and an emulator seeded for it, made before
 * the tests (of the file, or of the describe it is called in) and stopped after them; its output
 * is far larger than a pipe holds. `statePath` is state/s.json (not written).
 */
export function useGeneratedStack(
  prefix: string,
  n: number,
): { readonly emu: RunningEmulator; readonly dir: string; readonly stackFile: string; readonly statePath: string } {
  const tmp = useTempDir(prefix);
  let emu: RunningEmulator | undefined;
  let stackFile = "";
  beforeAll(async () => {
    const g = generate(tmp.dir, n);
    stackFile = g.stack;
    emu = await startEmulator({ seedFile: g.seed, port: 0, host: "127.0.0.1" });
  }, 60_000);
  afterAll(async () => {
    await emu?.close();
  });
  return {
    get emu() {
      if (!emu) throw new Error("the emulator starts in beforeAll");
      return emu;
    },
    get dir() {
      return tmp.dir;
    },
    get stackFile() {
      return stackFile;
    },
    get statePath() {
      return join(tmp.dir, "state", "s.json");
    },
  };
}
