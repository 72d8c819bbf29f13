// Values in Markdown, escaped for where they stand. A plan's Markdown shows text from stack authors
// and from the cloud (condition titles and descriptions, member and object names) in a pull
// request, where the reviewer approves what GitHub renders: such text must be shown as text, never
// end a table cell or add a row, open HTML (a `<details>` that collapses the rest of the page),
// close the code block it stands in, or start a heading or a list.
import { maxOf } from "../../base/arrays.js";
import { terminalText } from "../../diagnostics/terminal-text.js";

/** The punctuation Markdown (GitHub's included: `$` math, `:` emoji) may read inside a line:
 *  CommonMark lets a backslash escape each, and then shows it as itself. (What only matters at the
 *  start of a line, `-`, `+`, `=`, digits, cannot be there: a value never starts a line.) */
const PUNCTUATION = /[\\`*_[\]<>&|#!~$:]/g;

/**
 * Inline text (a table cell, a list item, a heading, a summary): on one line (newlines and other
 * control characters shown as escapes, `\n`), Markdown's punctuation backslash-escaped, so that no
 * `|`, `<`, `*`, `` ` ``, `[` or `&` is read as Markdown, HTML, a link or an entity.
 */
export function mdText(value: string): string {
  return terminalText(value).replace(PUNCTUATION, "\\$&");
}

/** A code span's text that needs neither a longer fence, padding nor an escaped pipe. */
const PLAIN_CODE = /^[^`|\\ ][^`|\\]*(?<! )$/;

/** The length of the longest run of backticks in `text` (0 for none). */
function longestBacktickRun(text: string): number {
  return maxOf(
    (text.match(/`+/g) ?? []).map((r) => r.length),
    0,
  );
}

/**
 * A code span: delimited by more backticks than any run inside it, padded when the value starts
 * or ends with one. In a table cell (`cell`) a `|` is written `\|`, which GFM reads as a pipe
 * inside the cell; a backslash right before it would undo that, so a value with a backslash is
 * written as escaped text instead (as is an empty one, which no code span can hold).
 */
export function mdCode(value: string, cell = false): string {
  const text = terminalText(value);
  // The usual name or principal: nothing to pad or escape (a plan may hold 100,000 of them).
  if (PLAIN_CODE.test(text)) return `\`${text}\``;
  if (!text.trim() || (cell && text.includes("\\"))) return mdText(value);
  const fence = "`".repeat(longestBacktickRun(text) + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? " " : "";
  return `${fence}${pad}${cell ? text.replace(/\|/g, "\\|") : text}${pad}${fence}`;
}

/** A fenced code block of `text` (kept as it is, lines and all): its fence is longer than any
 *  run of backticks in it, so no line of it can close the block. */
export function mdCodeBlock(text: string): string[] {
  const fence = "`".repeat(Math.max(3, longestBacktickRun(text) + 1));
  return [fence, text, fence];
}
