// The watch loop (src/engine/drift-watch.ts) with an injected clock and random source: no real
// waiting, nothing that depends on the machine's speed.
import { describe, expect, it } from "vitest";
import { jittered, systemClock, type WatchClock, type WatchedCheck, watchDrift } from "../../src/engine/drift-watch.js";
import type { DriftReport } from "../../src/engine/drift.js";
import type { DriftFinding } from "../../src/plan/drift.js";

const OBJ = "projects/p/locations/l/restorePlans/r";
const finding = (member: string, cls: DriftFinding["class"] = "unmanaged"): DriftFinding => ({
  class: cls,
  object: OBJ,
  kind: "restorePlan",
  role: "roles/gkebackup.viewer",
  member,
});
const report = (findings: DriftFinding[], errored = false) =>
  ({ findings, errored, diagnostics: [], policies: 1, plan: {} }) as unknown as DriftReport;

function fakeClock(): WatchClock & { slept: number[] } {
  const slept: number[] = [];
  let t = Date.parse("2026-01-01T00:00:00Z");
  return {
    slept,
    now: () => new Date(t),
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}

async function run(reports: DriftReport[], random = () => 0.5) {
  const clock = fakeClock();
  const seen: WatchedCheck[] = [];
  let i = 0;
  await watchDrift(
    async () => reports[i++],
    async (c) => void seen.push(c),
    {
      intervalMs: 600_000,
      clock,
      random,
      checks: reports.length,
    },
  );
  return { seen, clock };
}

describe("drift --watch", () => {
  it("reports a drift once, then not again until it changes; a gone drift is said once", async () => {
    const a = finding("user:a@example.com");
    const b = finding("user:b@example.com");
    const { seen } = await run([report([]), report([a]), report([a]), report([a, b]), report([b]), report([b])]);
    expect(seen.map((c) => c.fresh.map((f) => f.member))).toEqual([[], [a.member], [], [b.member], [], []]);
    expect(seen.map((c) => c.cleared.map((f) => f.member))).toEqual([[], [], [], [], [a.member], []]);
    expect(seen.map((c) => c.ongoing)).toEqual([0, 0, 1, 1, 1, 1]);
  });

  it("the same grant in another class is new drift", async () => {
    const { seen } = await run([
      report([finding("user:a@example.com", "added")]),
      report([finding("user:a@example.com", "removed")]),
    ]);
    expect(seen.map((c) => c.fresh.length)).toEqual([1, 1]);
  });

  it("a failed check reports nothing and forgets nothing", async () => {
    const a = finding("user:a@example.com");
    const { seen } = await run([report([a]), report([], true), report([a])]);
    expect(seen.map((c) => [c.fresh.length, c.cleared.length])).toEqual([
      [1, 0],
      [0, 0],
      [0, 0],
    ]);
  });

  it("waits the interval with jitter from the injected random source, between checks only", async () => {
    const values = [0, 0.999999, 0.5];
    const { clock } = await run([report([]), report([]), report([]), report([])], () => values.shift() ?? 0.5);
    expect(clock.slept).toEqual([540_000, 660_000, 600_000]);
    expect(jittered(1000, 0.1, () => 0.25)).toBe(950);
  });

  it("stops when its signal aborts, after the check in progress", async () => {
    const ctl = new AbortController();
    let checks = 0;
    await watchDrift(
      async () => {
        if (++checks === 2) ctl.abort();
        return report([]);
      },
      async () => undefined,
      { intervalMs: 1000, clock: fakeClock(), signal: ctl.signal },
    );
    expect(checks).toBe(2);
  });
});

describe("systemClock", () => {
  it("a wake-up asked for while no sleep is under way ends the next sleep at once", async () => {
    const clock = systemClock();
    clock.wake();
    await clock.sleep(3_600_000);
    const sleeping = clock.sleep(3_600_000);
    clock.wake();
    await sleeping;
  });
});
