// extended(base, extra) must make exactly what `{ ...base, ...extra }` makes of plain data: the
// same own keys, in the same order, with the same values, "__proto__" an own key.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extended } from "../../src/base/extended.js";

const key = fc.oneof(
  fc.constantFrom("name", "role", "members", "etag", "id", "__proto__", "constructor", "0", "10", "a"),
  fc.string({ maxLength: 4 }),
);
const plain = fc.dictionary(
  key,
  fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 })),
  { maxKeys: 6 },
);

function described(o: object): [string, unknown][] {
  return Object.keys(o).map((k) => [k, (o as Record<string, unknown>)[k]]);
}

describe("extended", () => {
  it("equals the spread of both, key order included, on random objects", () => {
    fc.assert(
      fc.property(plain, plain, (a, b) => {
        const got = extended(a, b);
        const want = { ...a, ...b };
        expect(described(got)).toEqual(described(want));
        expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps a __proto__ key (from JSON) as an own key, never as the prototype", () => {
    const a = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as object;
    const got = extended(a, { y: 2 }) as Record<string, unknown>;
    expect(Object.keys(got)).toEqual(["__proto__", "x", "y"]);
    expect(got.polluted).toBeUndefined();
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
  });

  it("a key in both keeps base's place with extra's value", () => {
    expect(described(extended({ a: 1, b: 2, c: 3 }, { b: 9, d: 4 }))).toEqual([
      ["a", 1],
      ["b", 9],
      ["c", 3],
      ["d", 4],
    ]);
  });
});
