// Ink view of rendered lines: the same characters as the plain renderer, with colour.
import { Box, Text, render } from "ink";
import { terminalText } from "../../diagnostics/terminal-text.js";
import { INK_COLOR, type Line } from "../../diagnostics/lines.js";

export function LinesView({ lines }: { lines: readonly Line[] }) {
  return (
    <Box flexDirection="column">
      {lines.map((line, i) => (
        <Text key={i}>
          {line.length === 0
            ? " "
            : line.map((s, j) => (
                <Text
                  key={j}
                  color={s.style ? INK_COLOR[s.style] : undefined}
                  bold={s.style === "bold" || s.style === "heading"}
                  dimColor={s.style === "dim"}
                >
                  {terminalText(s.text)}
                </Text>
              ))}
        </Text>
      ))}
    </Box>
  );
}

/** Renders once and leaves the output on screen. */
export async function renderLines(lines: readonly Line[]): Promise<void> {
  const instance = render(<LinesView lines={lines} />, { patchConsole: false });
  instance.unmount();
  await instance.waitUntilExit();
}
