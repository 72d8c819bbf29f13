// "Do you want to perform these actions?" — typed answer, Terraform style: only "yes" approves,
// "details" shows the full diff and asks again, anything else cancels. A small line editor on
// useInput rather than a text-input widget: pasted answers arrive as one chunk ("yes\r") and
// must still submit.
import { useEffect, useState } from "react";
import { Box, Text, render, useApp, useInput } from "ink";

export type Answer = "yes" | "no" | "details";

export function toAnswer(text: string): Answer {
  const v = text.trim().toLowerCase();
  return v === "yes" ? "yes" : v === "details" ? "details" : "no";
}

export function ApprovalPrompt({ question, onAnswer }: { question: string; onAnswer: (a: Answer) => void }) {
  const { exit } = useApp();
  const [value, setValue] = useState("");
  const [done, setDone] = useState<string | undefined>();
  // Leave only after the answer has been drawn, so it stays on screen.
  useEffect(() => {
    if (done !== undefined) exit();
  }, [done, exit]);
  useInput(
    (input, key) => {
      const submit = (text: string) => {
        onAnswer(toAnswer(text));
        setDone(text);
      };
      if (key.return) return submit(value);
      if (key.backspace || key.delete) return setValue((v) => v.slice(0, -1));
      if (key.ctrl || key.meta || key.escape || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return;
      const end = input.search(/[\r\n]/);
      if (end >= 0) return submit(value + input.slice(0, end));
      setValue((v) => v + input);
    },
    { isActive: done === undefined },
  );
  return (
    <Box flexDirection="column">
      <Text> </Text>
      <Text bold>{question}</Text>
      <Text>  converge will perform the actions described above.</Text>
      <Text>  Only &apos;yes&apos; will be accepted to approve; &apos;details&apos; shows the full diff.</Text>
      <Text> </Text>
      <Text>
        <Text bold>  Enter a value: </Text>
        {done ?? value}
        {done === undefined ? <Text inverse> </Text> : null}
      </Text>
    </Box>
  );
}

export async function askApproval(question: string): Promise<Answer> {
  let answer: Answer = "no";
  const instance = render(<ApprovalPrompt question={question} onAnswer={(a) => (answer = a)} />, { exitOnCtrlC: true, patchConsole: false });
  await instance.waitUntilExit();
  return answer;
}
