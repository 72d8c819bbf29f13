import { describe, expect, it } from "vitest";
import {
  pathTooDeep,
  jsonDepthError,
  jsonTooDeepAt,
  lineColumnAt,
  MAX_DATA_DEPTH,
  tooDeep,
  valueTooDeep,
} from "../../src/diagnostics/nesting.js";
import { jsonNestsTooDeep, MAX_DEPTH, TOO_DEEP } from "../../src/yaml/yaml-limits.js";
import { parseState } from "../../src/state/parse-state.js";
import { refuseDeepPlan } from "../../src/plan/saved-plan.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";

const lists = (n: number) => "[".repeat(n) + "]".repeat(n);

describe("jsonTooDeepAt", () => {
  it("accepts max levels and gives the offset of the first bracket past them", () => {
    expect(jsonTooDeepAt(lists(5), 5)).toBeUndefined();
    expect(jsonTooDeepAt(lists(6), 5)).toBe(5);
    expect(jsonTooDeepAt(`{"a": [1, {"b": [[]]}]}`, 5)).toBeUndefined();
    expect(jsonTooDeepAt(`{"a": [1, {"b": [[]]}]}`, 4)).toBe(17);
    expect(jsonTooDeepAt(`{"a": [1, {"b": [[]]}]}`, 3)).toBe(16);
    // Siblings do not add up: depth goes back down at each closing bracket.
    expect(jsonTooDeepAt(`[${Array(1000).fill("[[]]").join(",")}]`, 3)).toBeUndefined();
  });

  it("does not count brackets inside strings, escaped quotes and backslashes included", () => {
    expect(jsonTooDeepAt(`["[[[[", "{{{{"]`, 1)).toBeUndefined();
    expect(jsonTooDeepAt(`["\\"[[[[", "\\\\", [[]]]`, 2)).toBe(18);
    expect(jsonTooDeepAt(`["\\\\\\"[[[["]`, 1)).toBeUndefined();
    // An unterminated string ends the scan (JSON.parse reports it).
    expect(jsonTooDeepAt(`["[[[[`, 1)).toBeUndefined();
  });

  it("is one pass: 100,000 levels and a 20 MB flat text each take well under a second", () => {
    expect(jsonTooDeepAt(lists(100_000), MAX_DATA_DEPTH)).toBe(MAX_DATA_DEPTH);
    const flat = JSON.stringify(
      Array.from({ length: 100_000 }, (_, i) => ({
        address: `r${i}`,
        outputs: { members: ["user:a@example.com"], etag: "x".repeat(150) },
      })),
      null,
      2,
    );
    const t = performance.now();
    expect(jsonTooDeepAt(flat, MAX_DATA_DEPTH)).toBeUndefined();
    expect(performance.now() - t).toBeLessThan(2000);
  });
});

describe("valueTooDeep", () => {
  it("counts lists and maps, not scalars, without recursion", () => {
    expect(valueTooDeep(JSON.parse(lists(5)), 5)).toBe(false);
    expect(valueTooDeep(JSON.parse(lists(6)), 5)).toBe(true);
    expect(valueTooDeep({ a: [{ b: "x" }, 1, null] }, 3)).toBe(false);
    expect(valueTooDeep({ a: [{ b: {} }] }, 3)).toBe(true);
    expect(valueTooDeep("x", 0)).toBe(false);
    expect(valueTooDeep(JSON.parse(`{"__proto__": [[1]]}`), 2)).toBe(true);
    expect(valueTooDeep(JSON.parse(lists(100_000)), MAX_DATA_DEPTH)).toBe(true);
  });
});

describe("pathTooDeep", () => {
  it("gives the path to the first list or map too deep, depth first in key order", () => {
    expect(pathTooDeep({ a: [[1]], b: { c: [2] } }, 3)).toBeUndefined();
    expect(pathTooDeep({ a: [1, [2]], b: { c: [{ d: 3 }] } }, 3)).toEqual(["b", "c", 0]);
    expect(pathTooDeep({ a: [[[1]]], b: [[[2]]] }, 3)).toEqual(["a", 0, 0]);
    expect(pathTooDeep(JSON.parse(lists(100_000)), 64)).toEqual(Array(64).fill(0));
  });
});

describe("the same wording for stacks, --var values, saved plans and states", () => {
  it("says nested more than N levels deep", () => {
    expect(TOO_DEEP).toBe(tooDeep(MAX_DEPTH));
    expect(TOO_DEEP).toBe("nested more than 64 levels deep");
    expect(jsonNestsTooDeep(lists(MAX_DEPTH))).toBe(false);
    expect(jsonNestsTooDeep(lists(MAX_DEPTH + 1))).toBe(true);
    const text = `{\n  "a": ${lists(300)}\n}`;
    expect(jsonDepthError(text, JSON.parse(text), MAX_DATA_DEPTH)).toEqual({
      line: 2,
      column: 8 + MAX_DATA_DEPTH - 1,
      summary: tooDeep(MAX_DATA_DEPTH),
    });
  });

  it("lineColumnAt counts lines and UTF-16 columns from 1", () => {
    expect(lineColumnAt("ab\ncd\n", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumnAt("ab\ncd\n", 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumnAt("ab\ncd\n", 6)).toEqual({ line: 3, column: 1 });
  });
});

/** The error `f` throws: a UserError, as its diagnostic. */
function userError(f: () => unknown) {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as UserError).diagnostics[0]!;
  }
  throw new Error("no error");
}

describe("states and saved plans 100,000 levels deep", () => {
  const deep = `{\n  "version": 1,\n  "outputs": {"x": {"value": ${lists(100_000)}}}\n}\n`;

  it("parseState refuses the state at the first list too deep", () => {
    const d = userError(() => parseState(deep, "s.json"));
    expect(d).toMatchObject({ summary: `state file s.json is ${tooDeep(MAX_DATA_DEPTH)}`, file: "s.json", line: 3 });
    expect(d.column).toBe(deep.split("\n")[2]!.indexOf("[") + 1 + MAX_DATA_DEPTH - 3);
    expect(d.detail).toMatch(/at most 256 levels.*No backup/s);
  });

  it("refuseDeepPlan refuses the plan at the first list too deep, and passes a plan as deep as allowed", () => {
    const d = userError(() => refuseDeepPlan(deep, JSON.parse(deep), "p.json"));
    expect(d).toMatchObject({
      summary: `the saved plan p.json is ${tooDeep(MAX_DATA_DEPTH)}`,
      file: "p.json",
      line: 3,
    });
    expect(d.detail).toMatch(/Nothing was applied/);
    const allowed = `{"a": {"b": ${lists(MAX_DATA_DEPTH - 2)}}}`;
    expect(() => refuseDeepPlan(allowed, JSON.parse(allowed), "p.json")).not.toThrow();
  });
});
