import { render } from "ink-testing-library";
import { describe, expect, it, vi } from "vitest";
import { ProgressModel, ProgressView } from "../../src/cli/views/apply-progress.js";

// ink reads CI once at import and then draws only the last frame at exit: take it away first.
vi.hoisted(() => {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
});

/** The view's frame once it shows `text`: ink draws on its own schedule, so the test waits for the
 *  frame rather than for a fixed time (20 ms was not always enough on a loaded machine). */
async function frameWith(view: ReturnType<typeof render>, text: string): Promise<string> {
  await vi.waitFor(() => expect(view.lastFrame()).toContain(text), { timeout: 30_000, interval: 10 });
  return view.lastFrame() ?? "";
}
const RP = "projects/p/locations/us-central1/restorePlans/a";

describe("live apply progress", () => {
  it("draws a row per resource, its result, and the retries so far", async () => {
    const model = new ProgressModel();
    const view = render(<ProgressView model={model} />);
    model.on({ type: "step", address: "viewers", action: "create", phase: "start" });
    model.on({ type: "step", address: "invoker", action: "replace", phase: "start" });
    model.on({ type: "step", address: "quiet", action: "no-op", phase: "start" });
    await frameWith(view, "invoker: Replacing...");
    expect(view.lastFrame()).toContain("viewers: Creating...");
    expect(view.lastFrame()).not.toContain("quiet");
    expect(view.lastFrame()).not.toContain("retr");

    model.on({
      type: "retry",
      resource: RP,
      call: "setIamPolicy",
      status: "UNAVAILABLE",
      httpStatus: 503,
      attempt: 1,
      maxAttempts: 10,
      delayMs: 200,
      reason: "transient",
    });
    model.on({ type: "step", address: "viewers", action: "create", phase: "done", ms: 1234 });
    model.on({
      type: "step",
      address: "invoker",
      action: "replace",
      phase: "error",
      error: { severity: "error", summary: "PERMISSION_DENIED" },
    });
    const frame = await frameWith(view, "✘ invoker: failed: PERMISSION_DENIED");
    expect(frame).toContain("✔ viewers: Creation complete after 1.2s");
    expect(frame).toContain("✘ invoker: failed: PERMISSION_DENIED");
    // One line, cut at the terminal's width (100 columns here) so the view does not jump.
    const retryLine = frame.split("\n").find((l) => l.startsWith("↻"));
    expect(retryLine).toMatch(new RegExp(`^↻ 1 retry so far; last: ${RP}: setIamPolicy failed with U.*…$`));
    expect(retryLine!.length).toBeLessThanOrEqual(100);
    view.unmount();
  });

  it("says a change is queued until its policy's write is sent, then what it does", async () => {
    const model = new ProgressModel();
    const view = render(<ProgressView model={model} />);
    model.on({ type: "step", address: "viewers", action: "create", phase: "start", policy: RP });
    const queued = await frameWith(view, "viewers: queued");
    expect(queued).not.toContain("Creating");
    model.on({ type: "policy-write", policy: RP, phase: "start" });
    await frameWith(view, "viewers: Creating...");
    view.unmount();
  });

  it("says a resource Ctrl-C stopped was not started, instead of spinning on", async () => {
    const model = new ProgressModel();
    const view = render(<ProgressView model={model} />);
    model.on({ type: "step", address: "viewers", action: "create", phase: "start" });
    model.on({ type: "step", address: "viewers", action: "create", phase: "interrupted" });
    await frameWith(view, "- viewers: not started (interrupted)");
    expect(view.lastFrame()).not.toContain("Creating");
    view.unmount();
  });
});
