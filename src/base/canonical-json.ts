// Canonical JSON: keys of every object sorted (by UTF-16 code units, JavaScript's default sort), no
// white space, arrays in their order, properties whose value is undefined left out. What a saved
// plan's seal (src/plan/saved-plan.ts) and a plan's inputs hash (src/config/redact.ts) are computed over.
/** JSON with sorted object keys and no white space (see the header). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return scalarJson(value);
  // JSON.stringify of a copy whose keys are inserted in sorted order: the same text, in half the
  // time of building it here (sealing a plan of 100,000 resources took seconds). Object keys that
  // are array indexes (JavaScript enumerates them first, in numeric order) or "__proto__" (an
  // assignment would not create it) are left to the general writer.
  const copy = sortedCopy(value);
  return copy === UNORDERED ? canonicalText(value) : JSON.stringify(copy);
}

function scalarJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error(`canonicalJson: ${typeof value} has no JSON form`);
  return text;
}

const UNORDERED = Symbol("unordered");
const INDEX_LIKE = /^(?:0|[1-9][0-9]*)$/;

/** `value` with every object's keys in sorted order and undefined left out (in arrays: null);
 *  UNORDERED when some key cannot be put in that order. Throws as canonicalText does. */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== "object") {
    if (typeof value === "function" || typeof value === "symbol") scalarJson(value);
    return value;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const c = v === undefined ? null : sortedCopy(v);
      if (c === UNORDERED) return UNORDERED;
      out[i] = c;
    }
    return out;
  }
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined) continue;
    if (k === "__proto__" || INDEX_LIKE.test(k)) return UNORDERED;
    const c = sortedCopy(v);
    if (c === UNORDERED) return UNORDERED;
    out[k] = c;
  }
  return out;
}

/** The general writer (any keys). */
function canonicalText(value: unknown): string {
  if (value === null || typeof value !== "object") return scalarJson(value);
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalText(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalText(obj[k])}`).join(",")}}`;
}

/** Arrays at least this long are written element by element by canonicalChunks, shorter ones whole. */
const SPLIT_LENGTH = 64;
/** Objects and arrays this deep or deeper are written whole by canonicalChunks (a plan's long
 *  arrays, its changes and its prior state's resources, are at most 2 levels down). */
const CHUNK_DEPTH = 4;

/** canonicalJson(value) in pieces, whose concatenation is exactly that text: objects near the top
 *  key by key, long arrays element by element, anything else whole. The canonical text of a plan
 *  of 100,000 changes is 190 MB, and a key-sorted copy of the plan as large again. */
export function* canonicalChunks(value: unknown, depth = 0): Generator<string> {
  if (value === null || typeof value !== "object" || depth >= CHUNK_DEPTH) return yield canonicalJson(value);
  if (Array.isArray(value)) {
    if (value.length < SPLIT_LENGTH) return yield canonicalJson(value);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      yield i === 0 ? "[" : ",";
      yield* canonicalChunks(v === undefined ? null : v, depth + 1);
    }
    return yield "]";
  }
  const obj = value as Record<string, unknown>;
  let first = true;
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined) continue;
    yield `${first ? "{" : ","}${JSON.stringify(k)}:`;
    first = false;
    yield* canonicalChunks(v, depth + 1);
  }
  yield first ? "{}" : "}";
}
