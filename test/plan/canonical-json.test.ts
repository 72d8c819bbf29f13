// canonicalJson's fast path (JSON.stringify of a key-sorted copy) must give exactly the text of
// the general writer (the seal's definition: keys sorted by UTF-16 code units, no white space,
// undefined left out of objects and null in arrays), and throw where it throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/plan/saved-plan.js";

/** The definition, as it was written before the fast path. */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    if (text === undefined) throw new Error(`canonicalJson: ${typeof value} has no JSON form`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
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
      { é: 1, e: 2, E: 3, "\u{1F600}": 4, "\uffff": 5, "\u2028": "\u2028\u0000\"\\" },
      { d: new Date(0), w: new WithToJSON(), s: new String("ab"), n: new Number(3), m: new Map([["k", 1]]) },
      { toJSON: "not a function", x: -0, y: NaN, z: Infinity, big: 1e21 },
      [[[]], {}, [{}], ""],
    ];
    for (const c of cases) expect(canonicalJson(c)).toBe(reference(c));
  });

  it("equals the definition on random JSON-like values", () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("0", "1", "10", "__proto__", "toJSON", "a", "b"));
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 1 }), fc.constant(undefined), fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(key, tie("v"), { maxKeys: 5 })),
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
