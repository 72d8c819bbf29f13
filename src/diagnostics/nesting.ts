// How deep lists and maps may nest in what converge reads, checked where a file's text enters,
// before anything walks its value: schema validation, canonical JSON and its digest, redaction,
// rendering and state serialisation all recurse once per level, and a file nested 100,000 levels
// deep exhausted the call stack ("internal error: Maximum call stack size exceeded"). The same
// wording everywhere: "nested more than N levels deep", at the first list or map too deep.
//
// YAML's tokens are checked in ../yaml/yaml-limits.ts. JSON.parse does not recurse (a text
// 20,000,000 levels deep parses, in about twice the time of a flat one of that size), so a JSON
// file is parsed, its value's depth checked without recursion (a tenth of JSON.parse's time:
// scanning the text of a 100,000-resource state instead took half as long as parsing it), and only
// a value too deep has its text scanned (brackets outside strings) for the line and column.
//
// Stacks: 64 levels, for a YAML (or JSON) stack's text, --var values, a seed file, a program's
// document (../config/load.ts) and a value that ${…} references build (../language/resolve.ts). A
// stack needs about six; 64 leaves ten times that for data in variables.
// Saved plans and states: 256 levels. converge writes them holding a stack's values (so at most
// 64 deep) a few levels down: a plan's outputs, changes and configuration, a state's outputs. 256
// leaves room for those and stays far below what the recursive walks can take (a few thousand).

import type { CST } from "yaml";

export const MAX_STACK_DEPTH = 64;
export const MAX_DATA_DEPTH = 256;

/** The summary of every depth error. */
export const tooDeep = (max: number): string => `nested more than ${max} levels deep`;

/** The detail of a stack's depth error. */
export const STACK_TOO_DEEP_DETAIL =
  `Maps and lists may nest at most ${MAX_STACK_DEPTH} levels (a stack needs about six), written or built by ` +
  "references; deeper values are refused so that they cannot exhaust the parser or the call stack.";

/** The detail of a saved plan's or a state's depth error. */
export const DATA_TOO_DEEP_DETAIL =
  `Lists and maps in a saved plan or a state may nest at most ${MAX_DATA_DEPTH} levels: converge writes ` +
  `none deeper than a stack's ${MAX_STACK_DEPTH} and a few of its own. Deeper input is refused before ` +
  "anything walks it, so that it cannot exhaust the call stack.";

/** Where the string opening at `i` (a ") closes, or text.length when it does not. */
function stringEnd(text: string, i: number): number {
  for (;;) {
    const q = text.indexOf('"', i + 1);
    if (q < 0) return text.length;
    // Escaped when an odd number of backslashes comes before it (the opening quote stops the count).
    let b = q - 1;
    while (text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    i = q;
  }
}

/**
 * The offset of the first "[" or "{" of JSON text `text` that opens a list or map more than `max`
 * levels deep, if any; brackets inside strings do not count. One pass without recursion, which
 * skips strings with indexOf (most of a state's text), so that nothing deeper is ever parsed.
 * Text that is not JSON is scanned as well as it can be: JSON.parse reports its error after.
 */
export function jsonTooDeepAt(text: string, max: number): number | undefined {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

/** The 1-based line and column of offset `i` in `text` (the column in UTF-16 units), counted
 *  without copying the text (a state can be hundreds of megabytes). */
export function lineColumnAt(text: string, i: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let nl = text.indexOf("\n"); nl >= 0 && nl < i; nl = text.indexOf("\n", nl + 1)) {
    line++;
    lineStart = nl + 1;
  }
  return { line, column: i - lineStart + 1 };
}

/**
 * The offset of the first map or list (in document order) of a YAML text's tokens (yaml's
 * Parser) nested more than `max` levels deep, if any: a walk of the tokens without recursion, to
 * be made before yaml's composer (which recurses per level) sees them.
 */
export function yamlTooDeepAt(tokens: readonly CST.Token[], max: number): number | undefined {
  const stack: { token: CST.Token; depth: number }[] = tokens.map((token) => ({ token, depth: 0 })).reverse();
  while (stack.length) {
    const { token, depth } = stack.pop()!;
    if (token.type === "document") {
      if (token.value) stack.push({ token: token.value, depth });
      continue;
    }
    // A collection (a block map or sequence, a flow collection): yaml's CST.isCollection.
    if (!("items" in token)) continue;
    if (depth + 1 > max) return token.offset;
    const children: CST.Token[] = [];
    for (const item of token.items as CST.CollectionItem[]) {
      if (item.key) children.push(item.key);
      if (item.value) children.push(item.value);
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push({ token: children[i]!, depth: depth + 1 });
  }
  return undefined;
}

/** Whether `value` (JSON data) holds lists or maps more than `max` levels deep; without recursion. */
export function valueTooDeep(value: unknown, max: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()! + 1;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    // for-in, not Object.values: no array per map (a quarter of the time on a large state).
    if (Array.isArray(v)) for (const x of v as unknown[]) push(values, depths, x, depth);
    else for (const k in v) push(values, depths, (v as Record<string, unknown>)[k], depth);
  }
  return false;
}

function push(values: unknown[], depths: number[], x: unknown, depth: number): void {
  if (x === null || typeof x !== "object") return;
  values.push(x);
  depths.push(depth);
}

/** The path to the first list or map of `value` (JSON data) more than `max` levels deep, if any
 *  (depth first, in key order); without recursion. */
export function pathTooDeep(value: unknown, max: number): (string | number)[] | undefined {
  if (!valueTooDeep(value, max)) return undefined;
  // Each entry: a value, its key in its parent, and its parent's entry.
  type Entry = { v: unknown; key: string | number; parent: Entry | undefined; depth: number };
  const stack: Entry[] = [{ v: value, key: "", parent: undefined, depth: 1 }];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (e.v === null || typeof e.v !== "object") continue;
    if (e.depth > max) {
      const path: (string | number)[] = [];
      for (let at: Entry | undefined = e; at?.parent; at = at.parent) path.push(at.key);
      return path.reverse();
    }
    const keys: (string | number)[] = Array.isArray(e.v) ? e.v.map((_, i) => i) : Object.keys(e.v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      stack.push({ v: (e.v as Record<string | number, unknown>)[k], key: k, parent: e, depth: e.depth + 1 });
    }
  }
  return undefined;
}

/**
 * Where `value`, JSON.parse of `text`, nests more than `max` levels deep, if it does: the summary,
 * and the line and column of the first "[" or "{" of the text too deep (every list and map of the
 * value is a pair of brackets of the text, so the scan finds one).
 */
export function jsonDepthError(
  text: string,
  value: unknown,
  max: number,
): { line?: number; column?: number; summary: string } | undefined {
  if (!valueTooDeep(value, max)) return undefined;
  const at = jsonTooDeepAt(text, max);
  return { ...(at === undefined ? {} : lineColumnAt(text, at)), summary: tooDeep(max) };
}
