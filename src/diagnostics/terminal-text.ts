// Text converge did not write itself (server messages, object names, labels, federation fields,
// state contents, paths) must not drive the terminal it is printed on: set the window title, clear
// the screen, move the cursor, fake a line such as "Apply complete!", or reverse what a reviewer
// reads. Every renderer passes such text through terminalText; JSON output through jsonText.
import { isPlainObject } from "../base/plain-object.js";

/**
 * C0 controls but tab (newline and carriage return included: a line of output is one line), DEL,
 * C1 controls (U+0080–U+009F: U+009B is a CSI of its own on some terminals), the bidi marks,
 * embeddings, overrides and isolates ("Trojan Source"), the line and paragraph separators, and the
 * characters that print as nothing (soft hyphen, Mongolian vowel separator, zero-width space,
 * joiners, word joiner and invisible operators, BOM): `bob\u200b@example.com` and
 * `bob@example.com` are two members, or two condition titles, that must not look alike.
 */
const UNSAFE = new RegExp(
  String.raw`[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u20` +
    String.raw`2e\u2060-\u2064\u2066-\u2069\ufeff]`,
  "g",
);

/** The same class, without the global flag: a cheap test first (most text has nothing to escape,
 *  and a replace over it cost a second in rendering a plan of 100,000 resources). */
const HAS_UNSAFE = new RegExp(UNSAFE.source);

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r" };

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return (
    NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`)
  );
}

/**
 * `text` with every unsafe character shown as an escape (`\x1b`, `\n`, `\u202e`): printable, on one
 * line, and read the same by the eye as by the terminal. Idempotent; printable text is unchanged.
 */
export function terminalText(text: string): string {
  return HAS_UNSAFE.test(text) ? text.replace(UNSAFE, escapeChar) : text;
}

/** What JSON.stringify leaves raw but a terminal may act on, or prints as nothing (it escapes C0 controls itself). */
const JSON_UNSAFE =
  /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * JSON.stringify, with the characters above written as \u escapes. JSON output is data, and stays
 * exactly the same data (a parser reads "\u202e" as U+202E); it only cannot act on a terminal
 * when someone looks at it there. Such characters can only occur inside strings.
 */
export function jsonText(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space) as string | undefined; // undefined for undefined
  return unsafeEscaped(text ?? "null");
}

function unsafeEscaped(text: string): string {
  return text.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Arrays at least this long are written element by element by jsonChunks (each element whole);
 *  shorter ones whole. */
const SPLIT_LENGTH = 64;
/** Plain objects this deep or deeper are written whole by jsonChunks (a plan's long arrays, its
 *  resources and changes, are at most 4 levels down). */
const OBJECT_DEPTH = 5;

/**
 * jsonText(value, space) in pieces, whose concatenation is exactly that text: a plan of 100,000
 * resources is 400 MB of JSON, which as one string (and its bytes for stdout) took gigabytes.
 * Plain objects near the top are taken apart key by key and long arrays element by element; each
 * element, and anything else, is stringified whole at the indentation of where it sits.
 */
export function* jsonChunks(value: unknown, space: number): Generator<string> {
  if (!(space > 0)) return yield jsonText(value, space);
  yield* chunksAt(value, space, 0);
}

/** An object JSON.stringify writes key by key: plain, without a toJSON. */
function writtenByKey(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && typeof value.toJSON !== "function";
}

const omitted = (v: unknown) => v === undefined || typeof v === "function" || typeof v === "symbol";

function* chunksAt(value: unknown, space: number, depth: number): Generator<string> {
  const inner = "\n" + " ".repeat((depth + 1) * space);
  if (Array.isArray(value) && value.length >= SPLIT_LENGTH) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      yield (i === 0 ? "[" : ",") + inner + indentedText(omitted(v) ? null : v, space, depth + 1);
    }
    return yield "\n" + " ".repeat(depth * space) + "]";
  }
  if (depth >= OBJECT_DEPTH || !writtenByKey(value)) return yield indentedText(value, space, depth);
  let first = true;
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    const v = value[k];
    if (omitted(v)) continue;
    yield (first ? "{" : ",") + inner + unsafeEscaped(JSON.stringify(k)) + ": ";
    first = false;
    yield* chunksAt(v, space, depth + 1);
  }
  yield first ? "{}" : "\n" + " ".repeat(depth * space) + "}";
}

/** jsonText(value, space) as it is written `depth` levels deep: stringified inside `depth` arrays
 *  (so that JSON.stringify indents it), which are then cut off. */
function indentedText(value: unknown, space: number, depth: number): string {
  let wrapped: unknown = value === undefined ? null : value;
  for (let i = 0; i < depth; i++) wrapped = [wrapped];
  const text = JSON.stringify(wrapped, null, space) as string | undefined;
  if (text === undefined) return "null";
  let open = 0;
  for (let i = 1; i <= depth; i++) open += 2 + i * space;
  let close = 0;
  for (let i = 0; i < depth; i++) close += 2 + i * space;
  return unsafeEscaped(text.slice(open, text.length - close));
}
