// Issue 12: --call-timeout and --timeout. Durations name their option when malformed; the
// command's time limit aborts the interrupt signal of the phase running (like a first Ctrl-C),
// with a reason that says it was the time limit, so the command can exit 1 rather than 130.
import { describe, expect, it } from "vitest";
import { callTimeoutOf } from "../../src/cli/common.js";
import { durationMs } from "../../src/cli/deadline.js";
import { abortedByTimeout, commandTimeout, startCommandTimeout } from "../../src/cli/deadline.js";
import { PLANNING, catchInterrupts, planning, stoppedBy } from "../../src/cli/interrupt.js";
import { interruptedError } from "../../src/cloud/errors.js";

describe("durations", () => {
  it("parse ms, s, m and h, and name the option when malformed", () => {
    expect(durationMs("500ms", "--call-timeout")).toBe(500);
    expect(durationMs("2s", "--call-timeout")).toBe(2000);
    expect(durationMs("1.5m", "--timeout")).toBe(90_000);
    expect(durationMs("1h", "--timeout")).toBe(3_600_000);
    expect(() => durationMs("soon", "--timeout")).toThrow('--timeout "soon" is not a duration (e.g. 30s, 2m, 500ms)');
    expect(() => durationMs("2 minutes")).toThrow(/^--lock-timeout /);
  });

  it("--call-timeout defaults to 2 minutes and must be positive", () => {
    expect(callTimeoutOf({})).toBe(120_000);
    expect(callTimeoutOf({ callTimeout: "2s" })).toBe(2000);
    expect(() => callTimeoutOf({ callTimeout: "0s" })).toThrow(/--call-timeout must be more than 0/);
  });
});

describe("the command's time limit", () => {
  it("aborts the running phase's signal like a first Ctrl-C, with a TimeoutError reason", async () => {
    expect(() => startCommandTimeout("0ms")).toThrow(/--timeout must be more than 0/);
    startCommandTimeout("50ms");
    expect(commandTimeout()?.text).toBe("50ms");
    const r = await planning(
      (signal) =>
        new Promise<AbortSignal>((resolve) => signal.addEventListener("abort", () => resolve(signal), { once: true })),
    );
    expect(r.interrupted).toBe("timeout");
    expect(abortedByTimeout(r.value)).toBe(true);
    // A call stopped by it says so, instead of "interrupted".
    expect(interruptedError({ methodId: "x.getIamPolicy", resource: "r", signal: r.value }, "not sent").message).toBe(
      "getIamPolicy r: CANCELLED: stopped: --timeout 50ms reached: not sent",
    );
    // A phase that starts after the limit is stopped at once.
    const late = catchInterrupts(PLANNING);
    expect(stoppedBy(late.signal)).toBe("timeout");
    late.dispose();
  });

  it("a Ctrl-C is not a timeout", () => {
    const c = new AbortController();
    c.abort();
    expect(abortedByTimeout(c.signal)).toBe(false);
    expect(stoppedBy(c.signal)).toBe("signal");
  });
});
