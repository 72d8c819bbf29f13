// Every 429 is counted (issue 45): under an emulated request quota, each RESOURCE_EXHAUSTED answer
// the emulator gives, to a read of the plan or a write of the apply, paced or not, is in the retry
// summaries: the JSON `retry_summary` of each phase, and the human "Retried N times" lines (an
// apply prints one per phase; the bench once read only the first of them, test/bench/retry-count).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EmulatorWorld, UiEvent } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, type EmulatorStats } from "./helpers.js";
import { bindingYaml, clearFaults, M, responses, rp, setFaults, stackHead, uiEvents } from "./apply-helpers.js";

const P = 40;
const Q = 1_200;
const IDS = Array.from({ length: P }, (_, i) => `plan-${i}`);
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: IDS.map((id) => ({ name: rp(id), policy: { bindings: [] } })),
};
const PACING: [string, string[]][] = [
  ["paced", ["--rate", `gkebackup=${Q}/min`]],
  ["unpaced", []],
];

const ws = useEmulatorWorkspace(SEED, "converge-quota-counted-");

async function stackFile(variant: string): Promise<string> {
  const members = (id: string) => [`user:${variant}-${id}@example.com`];
  const body = IDS.map((id) => bindingYaml(`v_${id.replace("-", "_")}`, id, "roles/gkebackup.viewer", members(id)));
  const file = join(ws.dir, `stack-${variant}.yaml`);
  await writeFile(file, stackHead("quota") + body.join(""));
  return file;
}

const exhausted = (s: EmulatorStats, method: string) =>
  responses(s, method, "RESOURCE_EXHAUSTED") + responses(s, method, "429");

type Summary = Extract<UiEvent, { type: "retry_summary" }>;
const summaries = (stdout: string) => uiEvents(stdout).filter((e): e is Summary => e.type === "retry_summary");

async function run(command: string, variant: string, flags: string[]) {
  const file = await stackFile(variant);
  const state = join(ws.dir, `${variant}.state.json`);
  const r = await runCli([command, ...flags, "-f", file, "--state", state], { emulator: ws.emu, timeoutMs: 120_000 });
  expectExit(r, 0);
  return { stdout: r.stdout, stats: await stats(ws.emu) };
}

beforeEach(async () => {
  await resetStats(ws.emu);
  await setFaults(ws.emu, { quotas: { gkebackup: Q } });
});
afterEach(() => clearFaults(ws.emu));

describe(`every 429 under a request quota of ${Q}/min, ${P} policies`, () => {
  it.each(PACING)("apply --json (%s): each phase's retry_summary counts its refusals", async (variant, extra) => {
    const r = await run("apply", `json-${variant}`, ["--auto-approve", "--json", ...extra]);
    const by = (op: string) =>
      summaries(r.stdout).find((e) => e.retries.operation === op)?.retries.causes.RESOURCE_EXHAUSTED ?? 0;
    const want = { plan: exhausted(r.stats, M.rpGet), apply: exhausted(r.stats, M.rpSet) };
    expect({ plan: by("plan"), apply: by("apply") }).toEqual(want);
  });

  it.each(PACING)("apply (%s, human): the Retried lines add up to every refusal", async (variant, extra) => {
    const r = await run("apply", `human-${variant}`, ["--auto-approve", "--no-color", ...extra]);
    const lines = [...r.stdout.matchAll(/^Retried (\d+) times?: .*?(\d+) × RESOURCE_EXHAUSTED/gm)];
    const said = lines.reduce((n, m) => n + Number(m[2]), 0);
    expect(said).toBe(exhausted(r.stats, M.rpGet) + exhausted(r.stats, M.rpSet));
    // Unpaced, the first burst of reads is over the quota: the test does see refusals.
    if (variant === "unpaced") expect(said).toBeGreaterThan(0);
  });

  it("plan --json-stream, unpaced: the plan's retry_summary counts every refused read", async () => {
    const r = await run("plan", "plan", ["--json-stream"]);
    const summary = summaries(r.stdout)[0];
    expect(summary?.retries.causes.RESOURCE_EXHAUSTED ?? 0).toBe(exhausted(r.stats, M.rpGet));
  });
});
