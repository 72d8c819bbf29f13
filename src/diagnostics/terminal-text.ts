// Text converge did not write itself (server messages, object names, labels, federation fields,
// state contents, paths) must not drive the terminal it is printed on: set the window title, clear
// the screen, move the cursor, fake a line such as "Apply complete!", or reverse what a reviewer
// reads. Every renderer passes such text through terminalText; JSON output through jsonText.

/**
 * C0 controls but tab (newline and carriage return included: a line of output is one line), DEL,
 * C1 controls (U+0080–U+009F: U+009B is a CSI of its own on some terminals), the bidi marks,
 * embeddings, overrides and isolates ("Trojan Source"), and the line and paragraph separators.
 */
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same class, without the global flag: a cheap test first (most text has nothing to escape,
 *  and a replace over it cost a second in rendering a plan of 100,000 resources). */
const HAS_UNSAFE = new RegExp(UNSAFE.source);

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r" };

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`);
}

/**
 * `text` with every unsafe character shown as an escape (`\x1b`, `\n`, `\u202e`): printable, on one
 * line, and read the same by the eye as by the terminal. Idempotent; printable text is unchanged.
 */
export function terminalText(text: string): string {
  return HAS_UNSAFE.test(text) ? text.replace(UNSAFE, escapeChar) : text;
}

/** What JSON.stringify leaves raw but a terminal may act on (it escapes C0 controls itself). */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON.stringify, with the characters above written as \u escapes. JSON output is data, and stays
 * exactly the same data (a parser reads "\u202e" as U+202E); it only cannot act on a terminal
 * when someone looks at it there. Such characters can only occur inside strings.
 */
export function jsonText(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space) as string | undefined; // undefined for undefined
  return (text ?? "null").replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
