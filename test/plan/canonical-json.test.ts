// canonicalJson's fast path (JSON.stringify of a key-sorted copy) must give exactly the text of
// the general writer (the seal's definition: keys sorted by UTF-16 code units, no white space,
// undefined left out of objects and null in arrays), and throw where it throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalChunks, canonicalJson } from "../../src/base/canonical-json.js";

/** The definition, as it was written before the fast path. */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    if (text === undefined) throw new Error(`canonicalJson: ${typeof value} has no JSON form`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(obj[k])}`).join(",")}}`;
}

class WithToJSON {
  readonly a = 1;
  toJSON(): null {
    return null;
  }
}

describe("canonicalJson", () => {
  it("equals the definition on tricky values", () => {
    const proto = JSON.parse('{"__proto__": {"x": 1}, "b": 2}') as unknown;
    const cases: unknown[] = [
      { b: 1, a: [3, undefined, { d: undefined, c: "x" }], "": null },
      { "10": "a", "2": "b", "1a": "c", a: { "0": 1 } },
      [{ "4294967295": 1, "4294967294": 2, "01": 3, "-1": 4 }],
      proto,
      { é: 1, e: 2, E: 3, "\u{1F600}": 4, "\uffff": 5, "\u2028": '\u2028\u0000"\\' },
      { d: new Date(0), w: new WithToJSON(), s: new String("ab"), n: new Number(3), m: new Map([["k", 1]]) },
      { toJSON: "not a function", x: -0, y: NaN, z: Infinity, big: 1e21 },
      [[[]], {}, [{}], ""],
    ];
    for (const c of cases) expect(canonicalJson(c)).toBe(reference(c));
  });

  it("equals the definition on random JSON-like values", () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("0", "1", "10", "__proto__", "toJSON", "a", "b"));
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue({ maxDepth: 1 }),
        fc.constant(undefined),
        fc.array(tie("v"), { maxLength: 4 }),
        fc.dictionary(key, tie("v"), { maxKeys: 5 }),
      ),
    })).v;
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 6 }), (v) => canonicalJson(v) === reference(v)),
      { numRuns: 2000, seed: 2026 },
    );
  });

  it("throws as the definition does", () => {
    for (const bad of [{ a: () => 1 }, [Symbol("s")], { a: [1, () => 2] }, undefined, { b: 1n }]) {
      expect(() => canonicalJson(bad)).toThrow();
      expect(() => reference(bad)).toThrow();
    }
    expect(() => canonicalJson({ a: () => 1 })).toThrow("canonicalJson: function has no JSON form");
  });
});

// The seal hashes the canonical text in pieces as it is made (a plan of 100,000 changes is 190 MB
// of it): the pieces must join to exactly canonicalJson's text, and throw where it throws.
describe("canonicalChunks", () => {
  const joined = (v: unknown) => [...canonicalChunks(v)].join("");
  const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("0", "1", "10", "__proto__", "toJSON", "a", "b"));
  const leaf = fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.constant(undefined));
  const small = fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }), fc.dictionary(key, leaf, { maxKeys: 3 }));
  /** A long array (62-66 elements, split from 64 on) of copies of a few small values. */
  const long = (of: fc.Arbitrary<unknown>) =>
    fc
      .tuple(fc.array(of, { minLength: 1, maxLength: 3 }), fc.integer({ min: 62, max: 66 }))
      .map(([xs, n]) => Array.from({ length: n }, (_, i) => xs[i % xs.length]));
  /** Values with arrays long enough to be split at every depth. */
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: "small", maxDepth: 5 },
      leaf,
      fc.array(tie("v"), { maxLength: 4 }),
      long(small),
      fc.dictionary(key, tie("v"), { maxKeys: 5 }),
    ),
  })).v;

  it("joins to canonicalJson's text on random values, long arrays at every depth", () => {
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 6 }), (v) => joined(v) === canonicalJson(v)),
      { numRuns: 300, seed: 2026 },
    );
  });

  it("joins to canonicalJson's text on the tricky values, alone and in long arrays", () => {
    const proto = JSON.parse('{"__proto__": {"x": 1}, "b": 2}') as unknown;
    const tricky: unknown[] = [
      { "10": "a", "2": "b", a: { "0": 1 } },
      proto,
      { d: new Date(0), s: new String("ab"), m: new Map([["k", 1]]) },
      { x: -0, y: NaN },
      [],
      {},
      "s",
      1,
      null,
    ];
    for (const t of tricky) {
      expect(joined(t)).toBe(canonicalJson(t));
      const long = {
        a: Array.from({ length: 70 }, (_, i) => (i % 7 === 3 ? undefined : t)),
        [String(3)]: [Array.from({ length: 65 }, () => ({ z: t, a: [t] }))],
      };
      expect(joined(long)).toBe(canonicalJson(long));
    }
  });

  it("throws as canonicalJson does", () => {
    const long = (bad: unknown) => ({ a: Array.from({ length: 70 }, (_, i) => (i === 69 ? bad : i)) });
    for (const bad of [{ a: () => 1 }, long(() => 2), long(Symbol("s")), { b: 1n }, long({ c: 1n })]) {
      expect(() => canonicalJson(bad)).toThrow();
      expect(() => joined(bad)).toThrow();
    }
  });
});
