// Issue 12 (terminal): text from a server, a state file or the environment cannot drive the
// terminal through any renderer: control characters, ESC, C1 controls and bidi overrides are shown
// escaped, and a newline cannot start a line of its own.
import { render } from "ink-testing-library";
import { marked } from "marked";
import { describe, expect, it, vi } from "vitest";
import { diagnosticLines } from "../../src/diagnostics/diagnostic-lines.js";
import { seg, toAnsi, toPlain } from "../../src/diagnostics/lines.js";
import { planMarkdown } from "../../src/cli/render/markdown.js";
import { retryText } from "../../src/cli/render/retry-text.js";
import { ProgressModel, ProgressView } from "../../src/cli/views/apply-progress.js";
import { LinesView } from "../../src/cli/views/lines-view.js";
import { quickstartPlan } from "./plans.js";

vi.hoisted(() => {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
});

/** Sets the window title, clears the screen, fakes a line, then a C1 CSI and a right-to-left override. */
const EVIL = "\x1b]0;pwned\x07\x1b[2J\r\nApply complete!\x9b\u202e";
const SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\r\\nApply complete!\\x9b\\u202e";
/** Characters that must never reach the terminal from data (tab and newline come only from converge's own layout). */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("renderers neutralise hostile text", () => {
  it("plain lines: a segment's control characters are escaped, its newline does not start a line", () => {
    const out = toPlain([[seg("x = "), seg(EVIL, "bold")], [seg("next")]]);
    expect(out).toBe(`x = ${SHOWN}\nnext\n`);
  });

  it("ANSI lines keep converge's own colours and escape the segment's", () => {
    const out = toAnsi([[seg("x = "), seg(EVIL, "error")]]);
    expect(out).toBe(`x = \x1b[31m${SHOWN}\x1b[39m\n`);
  });

  it("diagnostics: summary, address and path on one line each; a detail's lines stay indented under it", () => {
    const out = toPlain(
      diagnosticLines([
        {
          severity: "error",
          summary: `denied ${EVIL}`,
          detail: `server said:\n${EVIL}`,
          address: `a${EVIL}`,
          path: `p${EVIL}`,
        },
      ]),
    );
    expect(out).toBe(
      `Error: denied ${SHOWN}\n  at p${SHOWN} (resource a${SHOWN})\n  server said:\n  ` +
        `\\x1b]0;pwned\\x07\\x1b[2J\\r\n  Apply complete!\\x9b\\u202e\n`,
    );
    expect(out).not.toMatch(/^Apply/m);
  });

  it("the ink view of lines", () => {
    const r = render(<LinesView lines={[[seg("x = "), seg(EVIL, "warning")]]} />);
    const frame = r.lastFrame() ?? "";
    r.unmount();
    expect(frame).toContain(`x = ${SHOWN}`);
    expect(frame.replace(/\x1b\[[0-9;]*m/g, "")).not.toMatch(RAW); // ink's own colours aside
  });

  it("the live apply progress: a failed step's server message and the last retry", async () => {
    const model = new ProgressModel();
    const view = render(<ProgressView model={model} />);
    model.on({
      type: "step",
      address: "viewers",
      action: "create",
      phase: "error",
      error: { severity: "error", summary: "failed", detail: `bad ${EVIL}` },
    });
    model.on({
      type: "retry",
      resource: `r${EVIL}`,
      call: "setIamPolicy",
      status: "UNAVAILABLE",
      httpStatus: 503,
      attempt: 1,
      maxAttempts: 10,
      delayMs: 200,
      reason: "transient",
    });
    await new Promise((r) => setTimeout(r, 20));
    const frame = view.lastFrame() ?? "";
    view.unmount();
    expect(frame).toContain(`viewers: failed: bad ${SHOWN}`);
    expect(frame.replace(/\x1b\[[0-9;]*m/g, "")).not.toMatch(RAW);
  });

  it("retry lines", () => {
    expect(
      retryText({
        type: "retry",
        resource: `r${EVIL}`,
        call: "getIamPolicy",
        status: "UNAVAILABLE",
        attempt: 1,
        maxAttempts: 3,
        delayMs: 100,
        reason: "transient",
      }),
    ).toBe(`r${SHOWN}: getIamPolicy failed with UNAVAILABLE; retrying in 0.1s (attempt 2 of 3)`);
  });

  it("the markdown plan (a pull-request comment): access rows and lint findings", async () => {
    const plan = await quickstartPlan();
    const change = plan.access_changes!.changes[0]!;
    const md = planMarkdown(
      {
        ...plan,
        access_changes: {
          ...plan.access_changes!,
          changes: [{ ...change, principal: `user:${EVIL}`, condition: { title: EVIL, expression: "true" } }],
        },
      },
      [{ severity: "warning", summary: `lint ${EVIL}`, detail: EVIL }],
    );
    // What a reader sees once GitHub renders it (Markdown escapes undone): the escaped text.
    const seen = (marked.parse(md) as string).replace(/<[^>]*>/g, "").replace(/&amp;/g, "&");
    expect(seen).toContain(`user:${SHOWN}`);
    expect(seen).toContain(`lint ${SHOWN} — ${SHOWN}`);
    expect(md).not.toMatch(RAW);
  });
});
