import { PassThrough } from "node:stream";
import { render } from "ink-testing-library";
import { describe, expect, it, vi } from "vitest";
import { ApprovalPrompt, type Answer, askPlain, toAnswer } from "../../src/cli/views/approval.js";

// ink reads CI once at import and then draws only the last frame at exit; CI runners set it.
// These tests are about the interactive frames, so take it away before ink loads.
vi.hoisted(() => {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
});

const tick = () => new Promise((r) => setTimeout(r, 20));

/** Waits (up to 5 s) for `cond`: a loaded machine may take longer than a fixed tick. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await tick();
}

async function answer(keys: string[]): Promise<{ got: Answer[]; frame: string }> {
  const got: Answer[] = [];
  const { stdin, lastFrame } = render(
    <ApprovalPrompt question="Do you want to perform these actions?" onAnswer={(a) => got.push(a)} />,
  );
  // Keys written before ink listens to stdin would be lost.
  await until(() => stdin.listenerCount("readable") > 0);
  for (const k of keys) {
    stdin.write(k);
    await tick();
  }
  // A submitted answer is drawn before the prompt leaves.
  if (/[\r\n]/.test(keys.join(""))) await until(() => got.length > 0 && stdin.listenerCount("readable") === 0);
  return { got, frame: lastFrame() ?? "" };
}

async function plain(typed: string | null): Promise<{ answer: Answer; shown: string }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (d: Buffer) => (shown += d.toString()));
  const pending = askPlain("Do you want to perform these actions?", { input, output });
  if (typed === null) input.end();
  else input.write(typed);
  return { answer: await pending, shown };
}

describe("approval prompt", () => {
  it("asks the question and explains the answers", async () => {
    const { frame } = await answer([]);
    expect(frame).toContain("Do you want to perform these actions?");
    expect(frame).toContain("Only 'yes' will be accepted to approve; 'details' shows the full diff.");
  });

  it("typed key by key, yes approves", async () => {
    const r = await answer(["y", "e", "s", "\r"]);
    expect(r.got).toEqual(["yes"]);
    expect(r.frame).toContain("Enter a value: yes");
  });

  it("typed faster than ink redraws (no pause between keys), yes approves", async () => {
    const got: Answer[] = [];
    const { stdin } = render(
      <ApprovalPrompt question="Do you want to perform these actions?" onAnswer={(a) => got.push(a)} />,
    );
    await until(() => stdin.listenerCount("readable") > 0);
    for (const k of ["y", "e", "s", "\r", "\r"]) stdin.write(k);
    await until(() => got.length > 0 && stdin.listenerCount("readable") === 0);
    expect(got).toEqual(["yes"]);
  });

  it("a pasted answer with its newline in one chunk still submits", async () => {
    expect((await answer(["yes\r"])).got).toEqual(["yes"]);
    expect((await answer(["details\n"])).got).toEqual(["details"]);
  });

  it("backspace edits; anything but yes or details is no", async () => {
    expect((await answer(["yex", "\u007f", "s", "\r"])).got).toEqual(["yes"]);
    expect((await answer(["y", "\r"])).got).toEqual(["no"]);
    expect(toAnswer("yes \n")).toBe("yes");
    expect(toAnswer("YES")).toBe("no");
    expect(toAnswer(" yes")).toBe("no");
    expect(toAnswer("")).toBe("no");
  });
});

describe("plain approval prompt (ink's CI mode would hide the question)", () => {
  it("shows the same question and reads a line", async () => {
    const r = await plain("yes\n");
    expect(r.answer).toBe("yes");
    expect(r.shown).toContain("Do you want to perform these actions?");
    expect(r.shown).toContain("Only 'yes' will be accepted to approve");
    expect(r.shown).toContain("Enter a value: ");
    expect((await plain("details\n")).answer).toBe("details");
    expect((await plain("y\n")).answer).toBe("no");
  });

  it("end of input is a refusal", async () => {
    expect((await plain(null)).answer).toBe("no");
  });
});
