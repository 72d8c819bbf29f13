// Rendered output as lines of styled segments. The plain renderer drops the styles, the ink
// view maps them to colours: both print the same characters. Every renderer shows a segment's
// text through terminalText: whatever a segment holds (a server's message, an object name), it
// cannot drive the terminal or start a line of its own.
import { terminalText } from "./terminal-text.js";

export type Style =
  "add" | "remove" | "change" | "replace" | "read" | "import" | "bold" | "dim" | "warning" | "error" | "heading";

export interface Segment {
  text: string;
  style?: Style;
}

export type Line = Segment[];

export const seg = (text: string, style?: Style): Segment => (style ? { text, style } : { text });

/** One line as plain text: its segments' text, shown through terminalText, trailing space trimmed. */
export function plainLine(line: Line): string {
  // terminalText escapes character by character: once per line is the same as once per segment.
  let text = "";
  for (const s of line) text += s.text;
  // trimEnd removes what /\s+$/ matches (white space and line terminators), several times faster.
  return terminalText(text).trimEnd();
}

export function toPlain(lines: readonly Line[]): string {
  // A loop rather than a map: a plan of 100,000 resources has over a million lines.
  const out = new Array<string>(lines.length);
  for (let i = 0; i < lines.length; i++) out[i] = plainLine(lines[i]!);
  return out.join("\n") + "\n";
}

const ANSI: Record<Style, [number, number]> = {
  add: [32, 39],
  remove: [31, 39],
  change: [33, 39],
  replace: [35, 39],
  read: [36, 39],
  import: [36, 39],
  bold: [1, 22],
  dim: [2, 22],
  warning: [33, 39],
  error: [31, 39],
  heading: [1, 22],
};

/** ANSI colours for streamed (non-ink) terminal output such as progress lines. */
export function ansiLine(line: Line): string {
  const text = (s: Segment) => terminalText(s.text);
  return line
    .map((s) => (s.style ? `\u001b[${ANSI[s.style][0]}m${text(s)}\u001b[${ANSI[s.style][1]}m` : text(s)))
    .join("")
    .trimEnd();
}

export function toAnsi(lines: readonly Line[]): string {
  return lines.map(ansiLine).join("\n") + "\n";
}

export const INK_COLOR: Partial<Record<Style, string>> = {
  add: "green",
  remove: "red",
  change: "yellow",
  replace: "magenta",
  read: "cyan",
  import: "cyan",
  warning: "yellow",
  error: "red",
};
