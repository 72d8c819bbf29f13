// Every 429 is counted (issue 45): the bench reads every "Retried" line of a run's whole output
// (an apply prints one for its plan's reads and one for its writes), and its quota verdict says
// whether they add up to the 429s the emulator answered.
import { describe, expect, it } from "vitest";
import { retriedByCause } from "../../bench/measure.js";
import { quotaVerdicts } from "../../bench/verdicts.js";
import type { QuotaRun } from "../../bench/extras.js";

const APPLY = [
  "Refreshed 220 IAM policies.",
  "Retried 56 times: 56 × RESOURCE_EXHAUSTED.",
  "",
  "Plan: 220 to add, 0 to change, 0 to destroy.",
  ...Array.from({ length: 30 }, (_, i) => `v_${i}: Creation complete`),
  "Retried 54 times: 53 × RESOURCE_EXHAUSTED, 1 × UNAVAILABLE.",
  "Apply complete! Resources: 220 added, 0 changed, 0 destroyed.",
].join("\n");

const run: QuotaRun = {
  kind: "request",
  quotaKey: "gkebackup",
  perMinute: 1200,
  p: 220,
  rate: null,
  calls: 440,
  boundMs: 22_000,
  wallMs: 22_100,
  exitCode: 0,
  ok: true,
  summary: "",
  reads: 276,
  writes: 273,
  exhausted: 109,
  reported429: 109,
  notOkByStatus: {},
  loadAvg1: 1,
};

describe("the bench's count of reported retries", () => {
  it("adds up every Retried line of the output, by cause, the plan's too", () => {
    expect(retriedByCause(APPLY)).toEqual({ RESOURCE_EXHAUSTED: 109, UNAVAILABLE: 1 });
    expect(retriedByCause("Retried 1 time: 1 × etag conflict.\nNo changes.")).toEqual({ "etag conflict": 1 });
    expect(retriedByCause("No changes.")).toEqual({});
  });

  it("a quota run's verdict: every 429 the emulator answered is reported", () => {
    const counted = (q: QuotaRun) => quotaVerdicts(q).find((v) => v.target.includes("429s reported"));
    expect(counted(run)).toMatchObject({ figure: "109 of 109", met: true });
    expect(counted({ ...run, reported429: 53 })).toMatchObject({ figure: "53 of 109", met: false });
  });
});
