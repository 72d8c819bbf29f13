// The human view of an apply that stopped early lists the first changes not started and counts the
// rest: an interrupted apply of 100,000 resources printed 11,907 "Not started (interrupted)"
// lines; and the resources skipped after a failure are named up to a limit, then counted.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ApplyResult } from "../../src/apply/executor.js";
import type { EngineEvent } from "../../src/contracts/events.js";
import { HumanView } from "../../src/cli/views/human-view.js";
import { newState } from "../../src/state/format.js";

const state = newState("s");
const counts = { added: 2, changed: 0, destroyed: 0, imported: 0, read: 0 };

function capture(): { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((err += String(chunk)), true));
  return { out: () => out, err: () => err };
}

afterEach(() => vi.restoreAllMocks());

describe("the human view of a long list", () => {
  it("an interrupted apply shows the first 10 changes not started, then how many more", async () => {
    const io = capture();
    const view = new HumanView({ color: false });
    view.applying({} as never);
    const skipped = Array.from({ length: 25 }, (_, i) => `r${i}`);
    for (const address of skipped)
      view.onEvent({ type: "step", address, action: "create", phase: "interrupted" } as EngineEvent);
    const result: ApplyResult = { state, failed: [], skipped, interrupted: true };
    await view.applied({ result, counts, destroy: false, stopped: "signal" });
    const notStarted = io
      .out()
      .split("\n")
      .filter((l) => l.endsWith("Not started (interrupted)"));
    expect(notStarted).toEqual(skipped.slice(0, 10).map((a) => `${a}: Not started (interrupted)`));
    expect(io.out()).toContain("… and 15 more not started (interrupted).");
    expect(io.err()).toContain("2 added, 0 changed, 0 destroyed before the interrupt; 25 not started. State saved.");
  });

  it("a short list is shown whole", async () => {
    const io = capture();
    const view = new HumanView({ color: false });
    view.applying({} as never);
    const skipped = ["a", "b"];
    for (const address of skipped)
      view.onEvent({ type: "step", address, action: "create", phase: "interrupted" } as EngineEvent);
    await view.applied({
      result: { state, failed: [], skipped, interrupted: true },
      counts,
      destroy: false,
      stopped: "signal",
    });
    expect(
      io
        .out()
        .split("\n")
        .filter((l) => l.endsWith("Not started (interrupted)")),
    ).toHaveLength(2);
    expect(io.out()).not.toContain("more not started");
  });

  it("after a failure, the skipped resources are named up to 20, then counted", async () => {
    const io = capture();
    const view = new HumanView({ color: false });
    view.applying({} as never);
    const skipped = Array.from({ length: 30 }, (_, i) => `s${i}`);
    const failed = [{ address: "f", diagnostic: { severity: "error" as const, summary: "boom" } }];
    await view.applied({
      result: { state, failed, skipped, interrupted: false },
      counts,
      destroy: false,
      stopped: false,
    });
    expect(io.err()).toContain(
      `Skipped because a change they depend on failed: ${skipped.slice(0, 20).join(", ")} and 10 more.`,
    );
  });

  it(
    "the failed resources are named up to 20 in the closing line, then " +
      "counted (each failure is reported above it)",
    async () => {
      const io = capture();
      const view = new HumanView({ color: false });
      view.applying({} as never);
      const failed = Array.from({ length: 25 }, (_, i) => ({
        address: `f${i}`,
        diagnostic: { severity: "error" as const, summary: "boom" },
      }));
      await view.applied({
        result: { state, failed, skipped: [], interrupted: false },
        counts,
        destroy: false,
        stopped: false,
      });
      expect(io.err()).toContain(
        `Apply failed. 25 failed: ${failed
          .slice(0, 20)
          .map((f) => f.address)
          .join(", ")} and 5 more.`,
      );
    },
  );
});
