// Lines folded to a terminal's width at word boundaries, as Terraform folds its prose: a line
// longer than the width is broken at its last space that fits, and its continuation lines are
// indented under its text (its own indentation and four more). A quoted value (an ID or a condition
// title a reader copies) is never broken inside, and a word longer than the line is left whole for
// the terminal to fold: what is copied from the screen is what converge printed.
import { terminalText } from "../../diagnostics/terminal-text.js";
import type { Line, Segment } from "../../diagnostics/lines.js";

/** How much deeper than its line a continuation starts. */
const HANGING = 4;
/** Below this, folding leaves too little on a line to read: lines are left to the terminal. */
const NARROWEST = 20;

/** The first character after the spaces at `i`. */
function nextWord(text: string, i: number): string | undefined {
  while (text[i] === " ") i++;
  return text[i];
}

/** The places a line may be broken: spaces outside double quotes, past its indentation, and not
 *  beside an "=" (an attribute's name stays with its value). */
function breaks(text: string, from: number): number[] {
  const at: number[] = [];
  let quoted = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (c === " " && !quoted && text[i - 1] !== " " && text[i - 1] !== "=" && nextWord(text, i) !== "=")
      at.push(i);
  }
  return at;
}

/** The segments of `line` that cover text[from, to), styles kept. */
function slice(line: Line, from: number, to: number): Segment[] {
  const out: Segment[] = [];
  let start = 0;
  for (const s of line) {
    const end = start + s.text.length;
    const a = Math.max(from, start);
    const b = Math.min(to, end);
    if (a < b)
      out.push(
        s.style
          ? { text: s.text.slice(a - start, b - start), style: s.style }
          : { text: s.text.slice(a - start, b - start) },
      );
    start = end;
  }
  return out;
}

/** `line` as one or more lines of at most `width` columns where it can be broken (see above). */
export function wrapLine(line: Line, width: number): Line[] {
  // The text as the terminal shows it: escaped characters take their escapes' width.
  const shown: Line = line.map((s) =>
    s.style ? { text: terminalText(s.text), style: s.style } : { text: terminalText(s.text) },
  );
  let text = "";
  for (const s of shown) text += s.text;
  text = text.trimEnd();
  if (text.length <= width || width < NARROWEST) return [line];
  const indent = text.length - text.trimStart().length;
  // A change marker ("+", "-/+", "#") stays with the word after it.
  const marker = /^(?:[-+~#>]|[-+]\/[-+]|<=) +/.exec(text.slice(indent))?.[0].length ?? 0;
  const pad = " ".repeat(Math.min(indent + HANGING, width - NARROWEST / 2));
  const out: Line[] = [];
  let start = 0;
  let room = width;
  const points = breaks(text, indent + marker);
  while (text.length - start > room) {
    // The last break that fits on this line; none: the first after it (a word longer than the line).
    let cut = -1;
    for (const p of points) {
      if (p <= start) continue;
      if (p - start <= room) cut = p;
      else {
        if (cut < 0) cut = p;
        break;
      }
    }
    if (cut < 0) break;
    out.push(out.length ? [{ text: pad }, ...slice(shown, start, cut)] : slice(shown, start, cut));
    start = cut + 1;
    room = width - pad.length;
  }
  out.push(out.length ? [{ text: pad }, ...slice(shown, start, text.length)] : slice(shown, start, text.length));
  return out;
}

/** Every line of `lines` wrapped to `width` (undefined: left as they are). */
export function* wrapLines(lines: Iterable<Line>, width: number | undefined): Generator<Line> {
  for (const l of lines) {
    if (width === undefined) yield l;
    else yield* wrapLine(l, width);
  }
}

/** The width lines are folded to on `stream`: its columns when it is a terminal; undefined (never
 *  folded) for a pipe or a file, which a program reads. */
export function terminalWidth(stream: NodeJS.WriteStream): number | undefined {
  return stream.isTTY && stream.columns > 0 ? stream.columns : undefined;
}
