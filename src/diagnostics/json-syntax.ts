// Why a file's text is not JSON, said without the file's own characters. JSON.parse quotes the text
// around the fault ("Unexpected token '…', "…" is not valid JSON"): a byte order mark, a zero-width
// space or a bidi override from the file would reach the terminal raw and invisible. Here the
// quotation is dropped, the place given as line and column, and any such character named.
import { lineColumnAt } from "./nesting.js";

/** Characters that show nothing or act on a terminal: controls, format characters (BOM,
 *  zero-width, bidi), separators other than the space. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}]/gu;

const NAMES: Record<number, string> = {
  0xfeff: "a byte order mark",
  0x200b: "a zero-width space",
  0xa0: "a no-break space",
  0x1b: "an escape",
};

/** `c` as U+XXXX, with its name when it has a common one. */
function describeCharacter(c: string): string {
  const code = c.codePointAt(0)!;
  const name = NAMES[code];
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}${name ? ` (${name})` : ""}`;
}

/** `text` with every invisible character (but the plain space) described as U+XXXX. */
function visibleCharacters(text: string): string {
  return text.replace(INVISIBLE, (c) => (c === " " ? c : describeCharacter(c)));
}

/** Where JSON.parse stopped in `text`, from its message: the position it gives, or, for an
 *  unexpected token it gives none for, the start when the text begins with that token. */
function faultOffset(message: string, text: string): number | undefined {
  const pos = /at position (\d+)/.exec(message);
  if (pos) return Number(pos[1]);
  const token = /^Unexpected token '(.+?)', /su.exec(message);
  const start = /^[ \t\n\r]*/.exec(text)![0].length;
  return token && text.startsWith(token[1]!, start) ? start : undefined;
}

/**
 * Why `text` is not JSON, from JSON.parse's error `e`: its message without the quotation of the
 * text, with the line and column, every invisible character described (never printed).
 */
export function jsonSyntaxMessage(e: unknown, text: string): string {
  const message = e instanceof Error ? e.message : String(e);
  const offset = faultOffset(message, text);
  const what = visibleCharacters(
    message.replace(/, ".*" is not valid JSON$/su, "").replace(/ in JSON at position \d+.*$/su, ""),
  );
  if (offset === undefined || offset >= text.length) return what;
  const c = String.fromCodePoint(text.codePointAt(offset)!);
  const found =
    new RegExp(INVISIBLE.source, "u").test(c) && !what.includes(describeCharacter(c))
      ? ` (${describeCharacter(c)})`
      : "";
  const { line, column } = lineColumnAt(text, offset);
  return `${what}${found} at line ${line}, column ${column}`;
}
