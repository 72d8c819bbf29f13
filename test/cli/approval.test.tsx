import { render } from "ink-testing-library";
import { describe, expect, it } from "vitest";
import { ApprovalPrompt, type Answer, toAnswer } from "../../src/cli/views/approval.js";

const tick = () => new Promise((r) => setTimeout(r, 20));

async function answer(keys: string[]): Promise<{ got: Answer[]; frame: string }> {
  const got: Answer[] = [];
  const { stdin, lastFrame } = render(<ApprovalPrompt question="Do you want to perform these actions?" onAnswer={(a) => got.push(a)} />);
  await tick();
  for (const k of keys) {
    stdin.write(k);
    await tick();
  }
  return { got, frame: lastFrame() ?? "" };
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

  it("a pasted answer with its newline in one chunk still submits", async () => {
    expect((await answer(["yes\r"])).got).toEqual(["yes"]);
    expect((await answer(["details\n"])).got).toEqual(["details"]);
  });

  it("backspace edits; anything but yes or details is no", async () => {
    expect((await answer(["yex", "\u007f", "s", "\r"])).got).toEqual(["yes"]);
    expect((await answer(["y", "\r"])).got).toEqual(["no"]);
    expect(toAnswer("  YES ")).toBe("yes");
    expect(toAnswer("")).toBe("no");
  });
});
