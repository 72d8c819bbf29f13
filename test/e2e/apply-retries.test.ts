// Retries are shown, not hidden: a transient error or another writer's etag conflict that converge
// retries is a `retry` event in `apply --json`, a line in the terminal output, and a count in the
// summary. The counts must match what the emulator actually answered.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EmulatorWorld, UiEvent } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace } from "./helpers.js";
import {
  bindingYaml,
  clearFaults,
  ep,
  M,
  memberYaml,
  responses,
  rp,
  setFaults,
  stackHead,
  uiEvents,
} from "./apply-helpers.js";

const IDS = ["a", "b", "c", "d", "e", "f"];
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: IDS.map((id) => ({
    name: rp(id),
    policy: { bindings: [{ role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] }] },
  })),
  endpoints: IDS.map((id) => ({ name: ep(id), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-retries-");
let n = 0;

/** A stack over every seeded policy whose members change with `variant`, so each apply writes all 12. */
async function stackFile(variant: string): Promise<string> {
  const body = IDS.map(
    (id) =>
      bindingYaml(`viewers_${id}`, id, "roles/gkebackup.viewer", [`user:${variant}-${id}@example.com`]) +
      memberYaml(`invoker_${id}`, id, "roles/aiplatform.user", `user:${variant}-${id}@example.com`),
  ).join("");
  const file = join(ws.dir, `stack-${++n}.yaml`);
  await writeFile(file, stackHead("retries") + body);
  return file;
}

const ofType = <T extends UiEvent["type"]>(events: UiEvent[], type: T) =>
  events.filter((e): e is Extract<UiEvent, { type: T }> => e.type === type);

beforeEach(() => resetStats(ws.emu));
afterEach(() => clearFaults(ws.emu));

describe("retries are reported", () => {
  it("apply --json: one retry event per UNAVAILABLE answer, and each phase's count in its retry_summary", async () => {
    const file = await stackFile("json");
    await setFaults(ws.emu, { errorRates: { UNAVAILABLE: 0.3 }, seed: 11 });
    const r = await runCli(
      ["apply", "--auto-approve", "--json", "-f", file, "--state", join(ws.dir, "json.state.json")],
      { emulator: ws.emu, timeoutMs: 60_000 },
    );
    expectExit(r, 0);
    const all = uiEvents(r.stdout);
    const retries = ofType(all, "retry");
    const s = await stats(ws.emu);
    const unavailable = Object.values(M).reduce((sum, m) => sum + responses(s, m, "UNAVAILABLE"), 0);
    expect(unavailable).toBeGreaterThan(3);
    expect(retries).toHaveLength(unavailable);
    for (const e of retries) {
      expect(e.retry).toMatchObject({ reason: "transient", status: "UNAVAILABLE", http_status: 503, max_attempts: 10 });
      expect(["getIamPolicy", "setIamPolicy"]).toContain(e.retry.call);
      expect(e.retry.attempt).toBeGreaterThanOrEqual(1);
    }
    // Retries while planning are tallied before the plan's change summary, the apply phase's
    // before the apply's.
    const planned = all.findIndex((e) => e.type === "change_summary" && e.changes.operation === "plan");
    const before = retries.filter((e) => all.indexOf(e) < planned).length;
    const counts = (n: number) => (n ? { UNAVAILABLE: n } : {});
    expect(ofType(all, "retry_summary").map((e) => e.retries)).toEqual([
      { operation: "plan", total: before, causes: counts(before) },
      { operation: "apply", total: unavailable - before, causes: counts(unavailable - before) },
    ]);
    expect(all.indexOf(ofType(all, "retry_summary")[0]!)).toBeLessThan(planned);
    expect(all.at(-1)!.type).toBe("outputs");
  });

  it("in the terminal output: a line per retry and the tally under Apply complete", async () => {
    const file = await stackFile("text");
    await setFaults(ws.emu, { errorRates: { UNAVAILABLE: 0.3 }, seed: 5 });
    const r = await runCli(["apply", "--auto-approve", "-f", file, "--state", join(ws.dir, "text.state.json")], {
      emulator: ws.emu,
      timeoutMs: 60_000,
    });
    expectExit(r, 0);
    const s = await stats(ws.emu);
    const unavailable = Object.values(M).reduce((sum, m) => sum + responses(s, m, "UNAVAILABLE"), 0);
    expect(unavailable).toBeGreaterThan(3);
    const lines = r.stdout
      .split("\n")
      .filter((l) => / failed with UNAVAILABLE \(HTTP 503\); retrying in \d+\.\ds \(attempt \d+ of 10\)$/.test(l));
    expect(lines).toHaveLength(unavailable);
    expect(lines[0]).toMatch(
      /^projects\/my-project\/locations\/us-central1\/(restorePlans|endpoints)\/[a-f]: (get|set)IamPolicy failed/,
    );
    // Planning's retries are summed under the refresh line, applying's under Apply complete!.
    const tallies = [...r.stdout.matchAll(/^Retried (\d+) times?: (\d+) × UNAVAILABLE\.$/gm)].map((m) => Number(m[1]));
    expect(tallies.reduce((a, b) => a + b, 0)).toBe(unavailable);
    expect(r.stdout.indexOf("Apply complete!")).toBeGreaterThan(0);
  });

  it("an etag conflict on write is a retry with its own reason, then the write succeeds", async () => {
    const file = await stackFile("etag");
    await setFaults(ws.emu, { errorRates: { ABORTED: 0.5 }, seed: 3, methods: [M.rpSet, M.epSet] });
    const r = await runCli(
      ["apply", "--auto-approve", "--json", "-f", file, "--state", join(ws.dir, "etag.state.json")],
      { emulator: ws.emu, timeoutMs: 60_000 },
    );
    expectExit(r, 0);
    const s = await stats(ws.emu);
    const aborted = responses(s, M.rpSet, "ABORTED") + responses(s, M.epSet, "ABORTED");
    expect(aborted).toBeGreaterThan(2);
    const all = uiEvents(r.stdout);
    const retries = ofType(all, "retry");
    expect(retries).toHaveLength(aborted);
    for (const e of retries)
      expect(e.retry).toMatchObject({ reason: "etag-conflict", status: "ABORTED", call: "setIamPolicy" });
    expect(ofType(all, "retry_summary").at(-1)!.retries).toEqual({
      operation: "apply",
      total: aborted,
      causes: { "etag conflict": aborted },
    });
  });

  it("plan shows its retries too, and nothing when there were none", async () => {
    const file = await stackFile("plan");
    await setFaults(ws.emu, { errorRates: { RESOURCE_EXHAUSTED: 0.4 }, seed: 9 });
    const r = await runCli(["plan", "-f", file, "--state", join(ws.dir, "plan.state.json")], {
      emulator: ws.emu,
      timeoutMs: 60_000,
    });
    expectExit(r, 0);
    const s = await stats(ws.emu);
    const exhausted = responses(s, M.rpGet, "RESOURCE_EXHAUSTED") + responses(s, M.epGet, "RESOURCE_EXHAUSTED");
    expect(exhausted).toBeGreaterThan(2);
    expect(r.stdout.match(/getIamPolicy failed with RESOURCE_EXHAUSTED \(HTTP 429\); retrying in/g)).toHaveLength(
      exhausted,
    );
    expect(r.stdout).toContain(`Retried ${exhausted} times: ${exhausted} × RESOURCE_EXHAUSTED.`);

    await clearFaults(ws.emu);
    const quiet = await runCli(["plan", "-f", file, "--state", join(ws.dir, "plan.state.json")], { emulator: ws.emu });
    expectExit(quiet, 0);
    expect(quiet.stdout).not.toMatch(/retrying|Retried/);
  });
});
