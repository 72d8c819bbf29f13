// A fast path for the common shape of stack files: block mappings and sequences of one-line
// scalars and one-line flow collections. It returns what yaml's parseDocument(text).toJS() gives,
// or undefined as soon as the text uses anything else (anchors, tags, block scalars, multi-line
// scalars, escapes, numbers, duplicate keys, odd indentation…), and the caller then uses yaml.
// yaml builds a full document with source positions, which costs seconds for a stack of
// 10,000 resources; positions are only needed for diagnostics, so they are parsed lazily.
// Anchors and aliases are never in the subset, and nesting deeper than MAX_DEPTH gives up too, so
// yaml-limits.ts checks every document this path does not read.
import { MAX_DEPTH } from "../../../src/yaml/yaml-limits.js";

/** The lines that hold content (not blank, not only a comment), in parallel arrays: each one's
 *  indentation, its text without the indentation and trailing space, and whether it starts a
 *  sequence item ("-" or "- …"). */
interface Lines {
  indents: number[];
  texts: string[];
  items: boolean[];
}

/** The content lines of `text`; undefined when one is a document marker or directive. */
function contentLines(text: string): Lines | undefined {
  const indents: number[] = [];
  const texts: string[] = [];
  const items: boolean[] = [];
  for (const raw of text.split("\n")) {
    const t = raw.trimStart();
    if (t === "" || t[0] === "#") continue;
    const indent = raw.length - t.length;
    if (indent === 0 && (t.startsWith("---") || t.startsWith("...") || t[0] === "%")) return undefined;
    const line = t.trimEnd();
    indents.push(indent);
    texts.push(line);
    items.push(line === "-" || line.startsWith("- "));
  }
  return { indents, texts, items };
}

/** Thrown to give up on the fast path. */
const BAIL = Symbol("bail");
function bail(): never {
  throw BAIL;
}

// Plain keys: a letter or _ first, then letters, digits and _ . / : - (never a trailing ":").
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

/** The items of a flow collection's body, split at its own commas (not those of a nested
 *  collection or inside quotes). */
function flowItems(body: string): string[] {
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
      items.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (level !== 0) bail();
  items.push(body.slice(start).trim());
  return items;
}

/** A one-line flow collection (trimmed, no comment) at nesting level `depth`, or its scalar item. */
function flow(text: string, depth: number): unknown {
  const c = text[0];
  if (c !== "[" && c !== "{") return flowScalar(text);
  if (depth > MAX_DEPTH || !text.endsWith(c === "[" ? "]" : "}")) bail();
  const body = text.slice(1, -1).trim();
  if (c === "[") return body === "" ? [] : flowItems(body).map((item) => flow(item, depth + 1));
  const out: Record<string, unknown> = {};
  if (body === "") return out;
  for (const item of flowItems(body)) {
    const i = item.indexOf(": ");
    if (i < 0) bail();
    const k = key(item.slice(0, i).trim());
    if (Object.hasOwn(out, k)) bail();
    out[k] = flow(item.slice(i + 2).trim(), depth + 1);
  }
  return out;
}

/** An inline value after "key: " or "- ": a scalar or a one-line flow collection, which may
 *  hold flow collections (`{ role: r, members: [a, b] }`) at levels from `depth` on. */
function inline(raw: string, depth: number): unknown {
  let text = raw.trim();
  const c = text[0];
  if (c === '"' || c === "'") {
    // A quoted scalar, optionally followed by a comment.
    const m = c === '"' ? /^("[^"\\]*")(?:\s+#.*)?$/.exec(text) : /^('(?:[^']|'')*')(?:\s+#.*)?$/.exec(text);
    if (!m) bail();
    return quoted(m[1]!);
  }
  const hash = text.includes("#") ? text.search(/\s#/) : -1;
  if (hash >= 0) text = text.slice(0, hash).trimEnd();
  if (c === "[" || c === "{") {
    if (text.includes("#")) bail();
    return flow(text, depth);
  }
  return plain(text, false);
}

/**
 * The value of `text` as yaml's `parseDocument(text).toJS()` gives it when the document is a
 * mapping written in the subset above; undefined otherwise (including every text yaml would
 * report an error or a warning for).
 */
export function parseSimpleYaml(text: string): Record<string, unknown> | undefined {
  // Tabs, CR, BOM, control and non-ASCII line-break characters: leave them to yaml.
  if (/[\t\r\uFEFF\x00-\x08\x0B\x0C\x0E-\x1F\x7F\x85\u2028\u2029]/.test(text)) return undefined;
  const lines = contentLines(text);
  if (!lines) return undefined;
  const { indents, texts, items } = lines;
  const n = texts.length;
  if (n === 0 || indents[0] !== 0) return undefined;
  let i = 0;

  // `depth`: the level of the map or list about to be read (the root map is level 1).
  const node = (indent: number, depth: number): unknown => (items[i] ? seq(indent, depth) : map(indent, depth));

  // After an inline value, a more indented line would continue it (or be an error).
  const noContinuation = (indent: number) => {
    if (i < n && indents[i]! > indent) bail();
  };

  const map = (indent: number, depth: number): Record<string, unknown> => {
    // One more level for an inline flow collection: past the limit, yaml reports where.
    if (depth + 1 > MAX_DEPTH) bail();
    const out: Record<string, unknown> = {};
    while (i < n && indents[i] === indent && !items[i]) {
      const t = texts[i]!;
      let sep = t.indexOf(": ");
      let rest: string;
      if (sep >= 0) rest = t.slice(sep + 2);
      else if (t.endsWith(":")) {
        sep = t.length - 1;
        rest = "";
      } else bail();
      const k = key(t.slice(0, sep));
      if (Object.hasOwn(out, k)) bail();
      i++;
      const r = rest.trim();
      if (r === "" || r[0] === "#") {
        if (i < n && indents[i]! > indent) out[k] = node(indents[i]!, depth + 1);
        else if (i < n && indents[i] === indent && items[i]) out[k] = seq(indent, depth + 1);
        else out[k] = null;
      } else {
        out[k] = inline(r, depth + 1);
        noContinuation(indent);
      }
    }
    return out;
  };

  const seq = (indent: number, depth: number): unknown[] => {
    if (depth + 1 > MAX_DEPTH) bail();
    const out: unknown[] = [];
    while (i < n && indents[i] === indent && items[i]) {
      const item = texts[i]!.slice(1).trim();
      if (item === "" || item[0] === "#") bail();
      // "- key: value" starts a compact mapping: not in the fast subset.
      if (
        item[0] !== '"' &&
        item[0] !== "'" &&
        item[0] !== "[" &&
        item[0] !== "{" &&
        (item.includes(": ") || item.endsWith(":"))
      )
        bail();
      i++;
      out.push(inline(item, depth + 1));
      noContinuation(indent);
    }
    return out;
  };

  try {
    if (items[0]) return undefined;
    const value = map(0, 1);
    return i === n ? value : undefined;
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  }
}
