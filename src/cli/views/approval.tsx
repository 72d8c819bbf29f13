// "Do you want to perform these actions?" — typed answer, Terraform style: only "yes" approves,
// "details" shows the full diff and asks again, anything else cancels.
import { useState } from "react";
import { Box, Text, render, useApp } from "ink";
import { TextInput } from "@inkjs/ui";

export type Answer = "yes" | "no" | "details";

export function ApprovalPrompt({ question, onAnswer }: { question: string; onAnswer: (a: Answer) => void }) {
  const { exit } = useApp();
  const [done, setDone] = useState<string | undefined>();
  return (
    <Box flexDirection="column">
      <Text bold>{question}</Text>
      <Text>  converge will perform the actions described above.</Text>
      <Text>  Only &apos;yes&apos; will be accepted to approve; &apos;details&apos; shows the full diff.</Text>
      <Text> </Text>
      <Box>
        <Text bold>  Enter a value: </Text>
        {done === undefined ? (
          <TextInput
            placeholder="yes / no / details"
            onSubmit={(value) => {
              const v = value.trim().toLowerCase();
              const answer: Answer = v === "yes" ? "yes" : v === "details" ? "details" : "no";
              setDone(value);
              onAnswer(answer);
              setTimeout(exit, 0);
            }}
          />
        ) : (
          <Text>{done}</Text>
        )}
      </Box>
    </Box>
  );
}

export async function askApproval(question: string): Promise<Answer> {
  let answer: Answer = "no";
  const instance = render(<ApprovalPrompt question={question} onAnswer={(a) => (answer = a)} />, { exitOnCtrlC: true, patchConsole: false });
  await instance.waitUntilExit();
  return answer;
}
