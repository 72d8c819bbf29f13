// A whole-string reference puts its value where the string stands: the document must still nest
// at most MAX_DEPTH levels there (issue 37, item 3).
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { resolveValue, valuesScope } from "../../src/language/resolve.js";
import { sensitive } from "../../src/language/sensitive.js";
import { isUnknown } from "../../src/language/expressions.js";
import { MAX_DEPTH, TOO_DEEP } from "../../src/yaml/yaml-limits.js";

/** `n` lists around "x". */
const lists = (n: number): unknown => (n === 0 ? "x" : [lists(n - 1)]);
const at = (n: number) => Array<number>(n).fill(0);

function resolve(value: unknown, depth: number): { out: unknown; diags: Diagnostic[] } {
  const diags: Diagnostic[] = [];
  const out = resolveValue("${v}", at(depth), valuesScope(new Map([["v", value]])), undefined, diags);
  return { out, diags };
}

describe("a reference's value nested past the limit where it stands", () => {
  it("fits exactly: MAX_DEPTH levels in all", () => {
    const r = resolve(lists(4), MAX_DEPTH - 4);
    expect(r.diags).toEqual([]);
    expect(r.out).toEqual(lists(4));
  });

  it("one level more is an error, and the value unknown", () => {
    const r = resolve(lists(5), MAX_DEPTH - 4);
    expect(r.diags.map((d) => d.summary)).toEqual([`${TOO_DEEP} once "\${v}" is resolved`]);
    expect(isUnknown(r.out)).toBe(true);
  });

  it("a secret's wrapper is no level", () => {
    expect(resolve(sensitive(lists(4)), MAX_DEPTH - 4).diags).toEqual([]);
    expect(resolve(sensitive(lists(5)), MAX_DEPTH - 4).diags).toHaveLength(1);
  });
});
