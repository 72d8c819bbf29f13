// `drift --watch` records a check's new and gone drift in the history before it prints them: what a
// reader (or a test) has seen printed is already recorded, so stopping the watch the moment a drift
// is shown (SIGTERM, Ctrl-C) never loses its record.
import { afterEach, describe, expect, it, vi } from "vitest";
import { runWatch, type DriftOptions } from "../../src/cli/commands/drift-watch.js";
import type { StackSession } from "../../src/engine/session.js";
import type { DriftReport } from "../../src/engine/drift.js";
import type { DriftFinding } from "../../src/plan/drift.js";

const finding: DriftFinding = {
  class: "added",
  object: "projects/p/locations/l/restorePlans/r",
  kind: "restorePlan",
  role: "roles/viewer",
  member: "user:mallory@example.com",
};
const report = (findings: DriftFinding[]) =>
  ({ findings, diagnostics: [], errored: false, policies: 1 }) as unknown as DriftReport;

afterEach(() => vi.restoreAllMocks());

describe("drift --watch", () => {
  it("records new and gone drift before it prints either", async () => {
    const recorded: string[] = [];
    const session = {
      stack: { name: "s" },
      store: {
        read: async () => ({ serial: 3 }),
        drift: { record: async (events: { event: string }[]) => void recorded.push(...events.map((e) => e.event)) },
      },
    } as unknown as StackSession;
    const printedAfter: string[] = [];
    const seen = (text: string) => {
      if (/New drift|Drift gone|Check \d/.test(text)) printedAfter.push(`${text.slice(0, 11)} after [${recorded}]`);
    };
    vi.spyOn(process.stdout, "write").mockImplementation(((t: string, cb?: () => void) => {
      seen(String(t));
      cb?.();
      return true;
    }) as typeof process.stdout.write);
    vi.spyOn(process.stderr, "write").mockImplementation(((t: string) => {
      seen(String(t));
      if (String(t).startsWith("Check")) setImmediate(() => process.emit("SIGUSR1", "SIGUSR1"));
      return true;
    }) as typeof process.stderr.write);
    const checks = [report([finding]), report([]), 0];
    const o = { interval: "1h", format: "text" } as DriftOptions;
    const code = await runWatch(session, o, async () => checks.shift()!);
    expect(code).toBe(0);
    expect(printedAfter).toEqual([
      "New drift a after [found]",
      "Check 1 at  after [found]",
      "Drift gone  after [found,cleared]",
      "Check 2 at  after [found,cleared]",
    ]);
  });
});
