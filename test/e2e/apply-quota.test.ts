// Quota-aware pacing (issue 20): under an emulated quota of Q requests per minute on the written
// service, a cold apply of P policies completes with 0 failures and a few 429s at most, each
// reported; with --rate at the quota it keeps to it, without it the adaptive back-off finds it.
// No assertion on wall-clock time.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EmulatorWorld, UiEvent } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, clearFaults, M, responses, rp, setFaults, stackHead, uiEvents } from "./apply-helpers.js";

const P = 20;
const Q = 600;
const IDS = Array.from({ length: P }, (_, i) => `plan-${i}`);
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: IDS.map((id) => ({ name: rp(id), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-quota-");

async function stackFile(variant: string): Promise<string> {
  const body = IDS.map((id) =>
    bindingYaml(`viewers_${id.replace("-", "_")}`, id, "roles/gkebackup.viewer", [`user:${variant}-${id}@example.com`]),
  ).join("");
  const file = join(ws.dir, `stack-${variant}.yaml`);
  await writeFile(file, stackHead("quota") + body);
  return file;
}

beforeEach(async () => {
  await resetStats(ws.emu);
  await setFaults(ws.emu, { quotas: { gkebackup: Q } });
});
afterEach(() => clearFaults(ws.emu));

async function applyUnderQuota(variant: string, extra: string[]) {
  const file = await stackFile(variant);
  const r = await runCli(
    ["apply", "--auto-approve", "--json", "-f", file, "--state", join(ws.dir, `${variant}.state.json`), ...extra],
    { emulator: ws.emu, timeoutMs: 120_000 },
  );
  expectExit(r, 0);
  const events = uiEvents(r.stdout);
  const s = await stats(ws.emu);
  const exhausted = responses(s, M.rpGet, "RESOURCE_EXHAUSTED") + responses(s, M.rpSet, "RESOURCE_EXHAUSTED");
  const summary = events.filter(
    (e): e is Extract<UiEvent, { type: "change_summary" }> =>
      e.type === "change_summary" && e.changes.operation === "apply",
  )[0]!;
  const retried = events
    .filter((e): e is Extract<UiEvent, { type: "retry_summary" }> => e.type === "retry_summary")
    .reduce((n, e) => n + (e.retries.causes.RESOURCE_EXHAUSTED ?? 0), 0);
  // Every policy written once, 0 failures.
  expect(summary.changes).toMatchObject({ add: P });
  expect(events.filter((e) => e.type === "apply_errored")).toEqual([]);
  expect(responses(s, M.rpSet, "OK") + responses(s, M.rpSet, "200")).toBeGreaterThanOrEqual(P);
  // Every 429 the emulator answered is reported.
  expect(retried).toBe(exhausted);
  return exhausted;
}

describe(`a cold apply of ${P} policies under a quota of ${Q}/min on gkebackup (its requests, or its writes)`, () => {
  it("with --rate gkebackup=Q/min: 0 failures, every policy written, few 429s, all reported", async () => {
    const exhausted = await applyUnderQuota("rated", ["--rate", `gkebackup=${Q}/min`]);
    expect(exhausted).toBeLessThanOrEqual(3);
  });

  it("without --rate: the adaptive back-off completes with 0 failures and a bounded number of 429s", async () => {
    const exhausted = await applyUnderQuota("adaptive", []);
    // Unpaced, the first bursts overshoot (an unknown quota is taken as one after 4 refusals in
    // 20 attempts): fewer 429s than the 2·P requests the apply makes (22 on this machine).
    expect(exhausted).toBeLessThan(2 * P);
  });

  it(
    "a write quota (gkebackup.write) and --rate " + "gkebackup.write=Q/min: reads unpaced, writes at the quota",
    async () => {
      await setFaults(ws.emu, { quotas: { "gkebackup.write": Q } });
      const exhausted = await applyUnderQuota("writes", ["--rate", `gkebackup.write=${Q}/min`]);
      expect(exhausted).toBeLessThanOrEqual(3);
    },
  );
});
