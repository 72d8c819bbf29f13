// "Do you want to perform these actions?" — typed answer, Terraform style: only "yes" approves,
// "details" shows the full diff and asks again, anything else cancels. A small line editor on
// useInput rather than a text-input widget: pasted answers arrive as one chunk ("yes\r") and
// must still submit.
import { createInterface } from "node:readline/promises";
import isInCi from "is-in-ci";
import { useEffect, useRef, useState } from "react";
import { Box, Text, render, useApp, useInput } from "ink";
import { type Line, toPlain } from "../../diagnostics/lines.js";
import { LinesView } from "./lines-view.js";
import { terminalWidth, wrapLines } from "../render/wrap.js";
import { takeSignals } from "../interrupt.js";

export type Answer = "yes" | "no" | "details";

/** Only the exact word approves, as in Terraform ("YES" or "y" cancel); the line ending and
 *  trailing blanks are not part of the answer. */
export function toAnswer(text: string): Answer {
  const v = text.trimEnd();
  return v === "yes" ? "yes" : v === "details" ? "details" : "no";
}

const EXPLAIN = [
  "  converge will perform the actions described above.",
  "  Only 'yes' will be accepted to approve; 'details' shows the full diff.",
];
const ASK = "  Enter a value: ";

/** The prompt; `summary` (the access summary) is drawn directly above "Enter a value:" so that
 *  it cannot scroll away from the decision. */
export function ApprovalPrompt({
  question,
  onAnswer,
  summary = [],
}: {
  question: string;
  onAnswer: (a: Answer) => void;
  summary?: readonly Line[];
}) {
  const { exit } = useApp();
  // What was typed lives in a ref, read and written synchronously by the input handler: keys that
  // arrive faster than React re-renders would otherwise be handled by a closure over an old value
  // (and "yes<Enter>" typed quickly could submit "ye" or "").
  const typed = useRef("");
  const submitted = useRef(false);
  const [value, setValue] = useState("");
  const [done, setDone] = useState<string | undefined>();
  // Leave only after the answer has been drawn, so it stays on screen.
  useEffect(() => {
    if (done !== undefined) exit();
  }, [done, exit]);
  const edit = (text: string) => {
    typed.current = text;
    setValue(text);
  };
  useInput(
    (input, key) => {
      if (submitted.current) return;
      const submit = (text: string) => {
        submitted.current = true;
        onAnswer(toAnswer(text));
        setDone(text);
      };
      if (key.return) return submit(typed.current);
      if (key.backspace || key.delete) return edit(typed.current.slice(0, -1));
      if (
        key.ctrl ||
        key.meta ||
        key.escape ||
        key.tab ||
        key.upArrow ||
        key.downArrow ||
        key.leftArrow ||
        key.rightArrow
      )
        return;
      const end = input.search(/[\r\n]/);
      if (end >= 0) return submit(typed.current + input.slice(0, end));
      edit(typed.current + input);
    },
    { isActive: done === undefined },
  );
  return (
    <Box flexDirection="column">
      <Text> </Text>
      <Text bold>{question}</Text>
      {EXPLAIN.map((line) => (
        <Text key={line}>{line}</Text>
      ))}
      <Text> </Text>
      {summary.length ? <LinesView lines={[...summary, []]} /> : null}
      <Text>
        <Text bold>{ASK}</Text>
        {done ?? value}
        {done === undefined ? <Text inverse> </Text> : null}
      </Text>
    </Box>
  );
}

export interface PromptIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

// With CI set, ink draws only the last frame at exit, so an ink prompt would be invisible while it
// waits: a terminal user with CI in their environment would face a silent hang. Ask with readline
// there (same words, echoed by the terminal).
export async function askPlain(question: string, io: PromptIo, summary: readonly Line[] = []): Promise<Answer> {
  io.output.write(`\n${question}\n${EXPLAIN.join("\n")}\n\n${summary.length ? toPlain(summary) + "\n" : ""}`);
  const rl = createInterface({ input: io.input, output: io.output, terminal: false });
  let untake = () => {};
  let onError = () => {};
  try {
    // End of input (Ctrl-D), input that fails (a terminal gone), Ctrl-C (or SIGTERM, SIGHUP, a
    // closed output) are refusals, never approvals; the lock is still released.
    const refused = new Promise<string>((r) => {
      rl.once("close", () => r(""));
      onError = () => r("");
      io.input.once("error", onError);
      untake = takeSignals(() => r(""));
    });
    return toAnswer(await Promise.race([rl.question(ASK), refused]));
  } finally {
    untake();
    io.input.off("error", onError);
    rl.close();
  }
}

export async function askApproval(question: string, lines: readonly Line[] = []): Promise<Answer> {
  // Folded as the plan above it is, so that the prompt shows the same lines.
  const summary = [...wrapLines(lines, terminalWidth(process.stdout))];
  if (isInCi) return askPlain(question, { input: process.stdin, output: process.stdout }, summary);
  let answer: Answer = "no";
  const instance = render(<ApprovalPrompt question={question} onAnswer={(a) => (answer = a)} summary={summary} />, {
    exitOnCtrlC: true,
    patchConsole: false,
  });
  // Input that fails (the terminal gone: EIO) is a refusal, not an uncaught error.
  const refuse = () => instance.unmount();
  process.stdin.once("error", refuse);
  try {
    await instance.waitUntilExit();
  } finally {
    process.stdin.off("error", refuse);
  }
  return answer;
}
