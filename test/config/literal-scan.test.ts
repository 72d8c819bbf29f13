// isLiteral / hasCall answer from one walk that allocates nothing (src/config/references.ts): they
// must give what their first definitions (a walk over every string, and containsWhere with
// functionCall) gave, on tricky and random values, and the same on a second asking.
import { describe, expect, it } from "vitest";
import { containsWhere } from "../../src/base/contains.js";
import { hasInterpolation } from "../../src/language/expressions.js";
import { functionCall } from "../../src/language/functions.js";
import { collectRefs, hasCall, isLiteral } from "../../src/config/references.js";
import { SourceDocument } from "../../src/yaml/source.js";

function someString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === "string") return test(value);
  if (Array.isArray(value)) return value.some((v) => someString(v, test));
  if (value && typeof value === "object") for (const v of Object.values(value)) if (someString(v, test)) return true;
  return false;
}
const oldHasCall = (v: unknown) => containsWhere(v, (x) => functionCall(x) !== undefined);
const oldIsLiteral = (v: unknown) => !someString(v, hasInterpolation) && !oldHasCall(v);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}
const STRINGS = [
  "",
  "a",
  "$",
  "$$",
  "${",
  "${x}",
  "$${x}",
  "$$${x}",
  "a${b.c}d",
  "${}",
  "fn::join",
  "x$$y",
  "user:a@b.c",
  "${ a }",
];
const KEYS = ["name", "fn::join", "fn::secret", "fn::", "fn:", "members", "__proto__", "a"];

function randomValue(r: () => number, depth: number): unknown {
  const k = r();
  if (depth > 3 || k < 0.4) {
    const t = r();
    return t < 0.7 ? STRINGS[Math.floor(r() * STRINGS.length)] : t < 0.8 ? 3 : t < 0.9 ? null : true;
  }
  if (k < 0.7) {
    const a: unknown[] = [];
    const n = Math.floor(r() * 4);
    for (let i = 0; i < n; i++) a.push(randomValue(r, depth + 1));
    if (r() < 0.1) a.length += 2; // holes
    return a;
  }
  const o: Record<string, unknown> = {};
  const n = Math.floor(r() * 3);
  for (let i = 0; i < n; i++)
    Object.defineProperty(o, KEYS[Math.floor(r() * KEYS.length)]!, {
      value: randomValue(r, depth + 1),
      enumerable: r() < 0.9,
      configurable: true,
      writable: true,
    });
  return o;
}

describe("isLiteral and hasCall (one walk)", () => {
  it("agree with their first definitions on random values, asked twice", () => {
    const r = rng(20);
    for (let i = 0; i < 5000; i++) {
      const v = randomValue(r, 0);
      for (let round = 0; round < 2; round++) {
        expect(hasCall(v), JSON.stringify(v)).toBe(oldHasCall(v));
        expect(isLiteral(v), JSON.stringify(v)).toBe(oldIsLiteral(v));
      }
    }
  });

  it("agree on tricky values: inherited keys, non-enumerable keys, holes, nested calls", () => {
    const proto = { "fn::join": [",", ["a"]] };
    const inherited = Object.create(proto) as Record<string, unknown>;
    const hidden = Object.defineProperty({ a: "x" }, "fn::secret", { value: "${y}", enumerable: false });
    const values: unknown[] = [
      inherited,
      hidden,
      // eslint-disable-next-line no-sparse-arrays -- a hole is one of the awkward values
      [, "${x}"],
      { a: [{ "fn::secret": "s" }] },
      { "fn::join": 1, b: 2 },
      { "fn:join": "${a}" },
      "$${a}",
      "${a}",
      [[["$$$${a}"]]],
    ];
    for (const v of values) {
      expect(hasCall(v)).toBe(oldHasCall(v));
      expect(isLiteral(v)).toBe(oldIsLiteral(v));
    }
  });

  it("collectRefs finds the same references and problems whether or not the value was asked about before", () => {
    const text =
      "name: s\nresources:\n  r:\n    properties:\n      a: ${x.y}\n      b: " +
      '["$${lit}", "${z}"]\n      c: {fn::joint: [1, 2]}\n';
    const src = new SourceDocument("/s.yaml", text);
    const doc = src.toJS() as { resources: { r: { properties: Record<string, unknown> } } };
    const props = doc.resources.r.properties;
    const first: unknown[] = [];
    const refs1 = collectRefs(src, props, ["resources", "r", "properties"], first as never);
    expect(isLiteral(props)).toBe(false);
    const second: unknown[] = [];
    const refs2 = collectRefs(src, props, ["resources", "r", "properties"], second as never);
    expect(refs2).toEqual(refs1);
    expect(refs1.map((x) => x.root)).toEqual(["x", "z"]);
    expect(second).toEqual(first);
    expect(first).toHaveLength(1);
  });
});
