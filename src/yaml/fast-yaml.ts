// A fast path for the common shape of stack files: block mappings, and sequences of one-line
// scalars, one-line flow collections and block mappings ("- key: value"). It returns what yaml's
// parseDocument(text).toJS() gives, or undefined as soon as the text uses anything else (anchors,
// tags, block scalars, multi-line scalars, escapes, numbers, duplicate keys, odd indentation…),
// and the caller then uses yaml.
// yaml builds a full document with source positions, which costs seconds for a stack of
// 10,000 resources; positions are only needed for diagnostics, so they are parsed lazily.
// Anchors and aliases are never in the subset, and nesting deeper than MAX_DEPTH gives up too, so
// yaml-limits.ts checks every document this path does not read.
import { MAX_DEPTH } from "./yaml-limits.js";
import { Repeats } from "./repeats.js";

/** The lines that hold content (not blank, not only a comment), in parallel arrays: each one's
 *  indentation, where its text starts and ends in the document (without the indentation and
 *  trailing space), and whether it starts a sequence item ("-" or "- …"). Offsets, not strings: a
 *  stack of 100,000 resources has 600,000 lines, and the strings were most of the parse's garbage. */
export interface Lines {
  count: number;
  indents: Int32Array;
  starts: Int32Array;
  ends: Int32Array;
  items: Uint8Array;
}

// YAML's white space is space and tab, its line breaks LF and CR; the texts read here have no tab
// or CR (parseSimpleYaml declines them), so space is the only white space. U+00A0, U+2000–U+200A,
// U+3000 and the others String.prototype.trim and \s know are content to YAML, never trimmed.
const SPACE = 32;

/** `s` without the spaces at its ends (only U+0020: see SPACE). */
function trimSpaces(s: string): string {
  let from = 0;
  let to = s.length;
  while (from < to && s.charCodeAt(from) === SPACE) from++;
  while (to > from && s.charCodeAt(to - 1) === SPACE) to--;
  return from === 0 && to === s.length ? s : s.slice(from, to);
}

/** The content lines of `text`; undefined when one is a document marker or directive. */
export function contentLines(text: string): Lines | undefined {
  const len = text.length;
  // At most one content line per line of text: arrays of that length, filled from the start.
  let most = 1;
  for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", nl + 1)) most++;
  const lines: Lines = {
    count: 0,
    indents: new Int32Array(most),
    starts: new Int32Array(most),
    ends: new Int32Array(most),
    items: new Uint8Array(most),
  };
  for (let pos = 0; pos <= len;) {
    let eol = text.indexOf("\n", pos);
    if (eol < 0) eol = len;
    let s = pos;
    while (s < eol && text.charCodeAt(s) === SPACE) s++;
    const indent = s - pos;
    pos = eol + 1;
    if (s === eol || text.charCodeAt(s) === 35 /* # */) continue;
    if (indent === 0 && (text.startsWith("---", s) || text.startsWith("...", s) || text.charCodeAt(s) === 37) /* % */)
      return undefined;
    let e = eol;
    while (e > s && text.charCodeAt(e - 1) === SPACE) e--;
    const at = lines.count++;
    lines.indents[at] = indent;
    lines.starts[at] = s;
    lines.ends[at] = e;
    // "-" alone, or "- " then more (the line ends in a character that is not white space)
    lines.items[at] = text.charCodeAt(s) === 45 && (e - s === 1 || text.charCodeAt(s + 1) === 32) ? 1 : 0;
  }
  return lines;
}

/** Where ": " first occurs in text[from, to), or -1. */
function colonSpace(text: string, from: number, to: number): number {
  for (let j = from; j < to - 1; j++) if (text.charCodeAt(j) === 58 && text.charCodeAt(j + 1) === 32) return j;
  return -1;
}

/** Where the key of the mapping line text[s, e) ends: at its ": ", or at a ":" that ends the line;
 *  -1 when the line has neither. */
export function keyEnd(text: string, s: number, e: number): number {
  const sep = colonSpace(text, s, e);
  return sep >= 0 ? sep : text.charCodeAt(e - 1) === 58 /* : */ ? e - 1 : -1;
}

/** The first index in [from, to) that is not a space, or `to`. */
function skipSpace(text: string, from: number, to: number): number {
  while (from < to && text.charCodeAt(from) === SPACE) from++;
  return from;
}

/** Maps with more keys than this find a duplicate key by counting their keys once. */
const LARGE_MAP = 16;

/** Thrown to give up on the fast path. */
const BAIL = Symbol("bail");
function bail(): never {
  throw BAIL;
}

// Plain keys: a letter or _ first, then letters, digits and _ . / : - (never a trailing ":").
// So never `<<`, a merge key: yaml's path refuses it at its position (yaml-values.ts).
const KEY = /^[A-Za-z_][A-Za-z0-9_./:-]*$/;
// Words the core schema resolves to null or booleans (any other plain word is a string here).
const NULL_WORDS = new Set(["~", "null", "Null", "NULL"]);
const TRUE_WORDS = new Set(["true", "True", "TRUE"]);
const FALSE_WORDS = new Set(["false", "False", "FALSE"]);
/** Whether `text` is one of those words (each starts with one of "~nNtTfF"). */
function isWord(text: string): boolean {
  const c = text.charCodeAt(0);
  // ~ N T F n t f
  if (c !== 126 && c !== 78 && c !== 84 && c !== 70 && c !== 110 && c !== 116 && c !== 102) return false;
  return NULL_WORDS.has(text) || TRUE_WORDS.has(text) || FALSE_WORDS.has(text);
}
// A plain scalar may not start with an indicator; digits, + and . may start a number.
const PLAIN_FIRST_BAD = new Set([..."-?:,[]{}#&*!|>'\"%@`~+.0123456789 "]);

function key(text: string): string {
  // (yaml limits implicit keys to 1024 characters)
  if (text.length > 1000 || !KEY.test(text) || text.endsWith(":") || text === "__proto__" || isWord(text)) bail();
  return text;
}

/** A one-line plain scalar (already trimmed, comment removed) in block or flow context. */
function plain(text: string, flow: boolean): unknown {
  if (text === "" || PLAIN_FIRST_BAD.has(text[0]!)) bail();
  if (isWord(text)) {
    if (text === "true" || text === "false" || text === "null")
      return text === "true" ? true : text === "false" ? false : null;
    bail();
  }
  if (text.includes(": ") || text.endsWith(":") || text.includes(" #")) bail();
  if (flow && /[[\]{},#]/.test(text)) bail();
  return text;
}

/** A one-line quoted scalar without escapes, or undefined when `text` is not one. */
function quoted(text: string): string | undefined {
  const c = text[0];
  if (c === '"') {
    const m = /^"([^"\\]*)"$/.exec(text);
    return m ? m[1]! : bail();
  }
  if (c === "'") {
    const m = /^'((?:[^']|'')*)'$/.exec(text);
    return m ? m[1]!.replace(/''/g, "'") : bail();
  }
  return undefined;
}

/** A flow scalar item (trimmed). */
function flowScalar(text: string): unknown {
  const q = quoted(text);
  return q !== undefined ? q : plain(text, true);
}

/** Where the quoted scalar opening at `i` closes ('' is a quote inside single quotes). */
function closingQuote(body: string, i: number): number {
  const q = body[i]!;
  let j = body.indexOf(q, i + 1);
  while (q === "'" && j >= 0 && body[j + 1] === "'") j = body.indexOf(q, j + 2);
  return j < 0 ? bail() : j;
}

const QUOTE_OR_BRACKET = /["'[\]{}]/;

/** The items of a flow collection's body, split at its own commas (not those of a nested
 *  collection or inside quotes). */
function flowItems(body: string): string[] {
  // The usual body (`a, b`: no quote, no nested collection) splits at every comma, natively.
  if (!QUOTE_OR_BRACKET.test(body)) {
    const parts = body.split(",");
    for (let i = 0; i < parts.length; i++) parts[i] = trimSpaces(parts[i]!);
    return parts;
  }
  const items: string[] = [];
  let level = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '"' || c === "'") i = closingQuote(body, i);
    else if (c === "[" || c === "{") level++;
    else if (c === "]" || c === "}") {
      if (--level < 0) bail();
    } else if (c === "," && level === 0) {
      items.push(trimSpaces(body.slice(start, i)));
      start = i + 1;
    }
  }
  if (level !== 0) bail();
  items.push(trimSpaces(body.slice(start)));
  return items;
}

/** A one-line flow collection (trimmed, no comment) at nesting level `depth`, or its scalar item. */
function flow(text: string, depth: number): unknown {
  const c = text[0];
  if (c !== "[" && c !== "{") return flowScalar(text);
  if (depth > MAX_DEPTH || !text.endsWith(c === "[" ? "]" : "}")) bail();
  const body = trimSpaces(text.slice(1, -1));
  if (c === "[") return body === "" ? [] : flowItems(body).map((item) => flow(item, depth + 1));
  const out: Record<string, unknown> = {};
  if (body === "") return out;
  for (const item of flowItems(body)) {
    const i = item.indexOf(": ");
    if (i < 0) bail();
    const k = key(trimSpaces(item.slice(0, i)));
    if (Object.hasOwn(out, k)) bail();
    out[k] = flow(trimSpaces(item.slice(i + 2)), depth + 1);
  }
  return out;
}

/** An inline value after "key: " or "- ": a scalar or a one-line flow collection, which may
 *  hold flow collections (`{ role: r, members: [a, b] }`) at levels from `depth` on. */
function inline(raw: string, depth: number): unknown {
  let text = trimSpaces(raw);
  const c = text[0];
  if (c === '"' || c === "'") {
    // A quoted scalar, optionally followed by a comment.
    const m = c === '"' ? /^("[^"\\]*")(?: +#.*)?$/.exec(text) : /^('(?:[^']|'')*')(?: +#.*)?$/.exec(text);
    if (!m) bail();
    return quoted(m[1]!);
  }
  const hash = text.includes("#") ? text.indexOf(" #") : -1;
  if (hash >= 0) text = trimSpaces(text.slice(0, hash));
  if (c === "[" || c === "{") {
    if (text.includes("#")) bail();
    return flow(text, depth);
  }
  return plain(text, false);
}

/** The content lines of a text the fast path may read: no tab, CR, BOM, control or non-ASCII
 *  line-break character (left to yaml), and a first content line at the left margin that is not
 *  a sequence's item (the document is a mapping). */
function subsetLines(text: string): Lines | undefined {
  if (/[\t\r\uFEFF\x00-\x08\x0B\x0C\x0E-\x1F\x7F\x85\u2028\u2029]/.test(text)) return undefined;
  const lines = contentLines(text);
  return lines && lines.count > 0 && lines.indents[0] === 0 && !lines.items[0] ? lines : undefined;
}

/** Whether a sequence item's text starts a mapping ("- key: value"). */
const isCompactMap = (item: string): boolean =>
  !`"'[{`.includes(item[0]!) && (item.includes(": ") || item.endsWith(":"));

/**
 * The value of `text` as yaml's `parseDocument(text).toJS()` gives it when the document is a
 * mapping written in the subset above; undefined otherwise (including every text yaml would
 * report an error or a warning for).
 */
export function parseSimpleYaml(text: string): Record<string, unknown> | undefined {
  const lines = subsetLines(text);
  if (!lines) return undefined;
  const { count: n, indents, starts, ends, items } = lines;
  let i = 0;
  const keyTexts = new Repeats<string>(); // keys read before (./repeats.ts)
  const scalars = new Repeats<unknown>(); // one-line scalars read before

  // `depth`: the level of the map or list about to be read (the root map is level 1).
  const node = (indent: number, depth: number): unknown => (items[i] ? seq(indent, depth) : map(indent, depth));

  // After an inline value, a more indented line would continue it (or be an error).
  const noContinuation = (indent: number) => i < n && indents[i]! > indent && bail();

  const map = (indent: number, depth: number): Record<string, unknown> => {
    // One more level for an inline flow collection: past the limit, yaml reports where.
    if (depth + 1 > MAX_DEPTH) bail();
    const out: Record<string, unknown> = {};
    let keys = 0;
    while (i < n && indents[i] === indent && !items[i]) {
      const s = starts[i]!;
      const e = ends[i]!;
      const sep = keyEnd(text, s, e);
      if (sep < 0) bail();
      let rest = Math.min(sep + 2, e);
      const k = keyTexts.read(text, s, sep, key, 0);
      // A duplicate key: asked of each key of a small map; a large one (the resources) counts its
      // keys at the end instead (each key is an own property, never __proto__ or an index).
      if (keys++ < LARGE_MAP && Object.hasOwn(out, k)) bail();
      i++;
      rest = skipSpace(text, rest, e);
      if (rest === e || text.charCodeAt(rest) === 35 /* # */) {
        if (i < n && indents[i]! > indent) out[k] = node(indents[i]!, depth + 1);
        else if (i < n && indents[i] === indent && items[i]) out[k] = seq(indent, depth + 1);
        else out[k] = null;
      } else {
        out[k] = scalars.read(text, rest, e, inline, depth + 1);
        noContinuation(indent);
      }
    }
    if (keys > LARGE_MAP && Object.keys(out).length !== keys) bail();
    return out;
  };

  const seq = (indent: number, depth: number): unknown[] => {
    if (depth + 1 > MAX_DEPTH) bail();
    const out: unknown[] = [];
    while (i < n && indents[i] === indent && items[i]) {
      const at = skipSpace(text, starts[i]! + 1, ends[i]!);
      const item = text.slice(at, ends[i]!);
      if (item === "" || item[0] === "#") bail();
      if (isCompactMap(item)) {
        out.push(compactMap(at, depth + 1));
        continue;
      }
      i++;
      out.push(inline(item, depth + 1));
      noContinuation(indent);
    }
    return out;
  };

  // "- key: value" starts a mapping whose keys are at the first key's column (`moved:` entries,
  // auditConfigs written in block style): the item's line is read as the mapping's first line.
  const compactMap = (at: number, depth: number): Record<string, unknown> => {
    const column = indents[i]! + (at - starts[i]!);
    indents[i] = column;
    starts[i] = at;
    items[i] = 0;
    return map(column, depth);
  };

  try {
    const value = map(0, 1);
    return i === n ? value : undefined;
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  }
}
