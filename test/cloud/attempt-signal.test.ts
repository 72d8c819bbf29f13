// The per-attempt signal replaces AbortSignal.timeout + a combined signal: same reasons (a
// TimeoutError on timeout, an AbortError when the call's signal abandons the attempt), and an
// attempt disposed of is no longer aborted by its call's signal.
import { describe, expect, it } from "vitest";
import { attemptSignal } from "../../src/cloud/attempt-signal.js";

const aborted = (s: AbortSignal) =>
  new Promise<void>((resolve) => s.addEventListener("abort", () => resolve(), { once: true }));

describe("attemptSignal", () => {
  it("aborts after its timeout with a TimeoutError, like AbortSignal.timeout", async () => {
    const a = attemptSignal(10);
    const b = AbortSignal.timeout(10);
    await Promise.all([aborted(a.signal), aborted(b)]);
    expect(a.timedOut()).toBe(true);
    expect((a.signal.reason as DOMException).name).toBe((b.reason as DOMException).name);
    expect((a.signal.reason as DOMException).name).toBe("TimeoutError");
  });

  it("is abandoned with an AbortError when the outer signal aborts, before or during the attempt", async () => {
    const outer = new AbortController();
    const during = attemptSignal(60_000, outer.signal);
    const other = attemptSignal(60_000, outer.signal);
    other.dispose();
    outer.abort();
    expect(during.signal.aborted).toBe(true);
    expect((during.signal.reason as DOMException).name).toBe("AbortError");
    expect(during.timedOut()).toBe(false);
    expect(other.signal.aborted).toBe(false);
    const before = attemptSignal(60_000, outer.signal);
    expect(before.signal.aborted).toBe(true);
    during.dispose();
    before.dispose();
  });

  it("dispose stops the timer", async () => {
    const a = attemptSignal(5);
    a.dispose();
    await new Promise((r) => setTimeout(r, 20));
    expect(a.signal.aborted).toBe(false);
    expect(a.timedOut()).toBe(false);
  });
});
