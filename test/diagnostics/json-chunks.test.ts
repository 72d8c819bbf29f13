// jsonChunks: jsonText(value, space) in pieces (a 100,000-resource plan is 400 MB of JSON, never
// to be one string). Joined, the pieces are exactly jsonText's text, on random values with what
// JSON.stringify treats specially: undefined, functions and symbols in objects and arrays, empty
// containers, toJSON, class instances, -0, NaN, characters jsonText escapes, long arrays (written
// element by element) and short ones (written whole), at every depth.
import { describe, expect, it } from "vitest";
import { jsonChunks, jsonText } from "../../src/diagnostics/terminal-text.js";
import { seededRandom } from "../support/seeded-random.js";

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

function randomValue(rand: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const leaves: (() => unknown)[] = [
    () => Math.floor(rand() * 1000) - 500,
    () => pick([0, -0, 1.5, NaN, Infinity, 1e21]),
    () => pick(["", "plain", "line\nbreak", 'quote " and \\', "bidi \u202e x", "\u2028sep", "\u0085nel", "é ü 中"]),
    () => pick([true, false, null]),
    () => undefined,
    () => () => 1,
    () => Symbol("s"),
    () => new Date(Date.UTC(2026, 10, 23)),
    () => ({ toJSON: () => ({ replaced: [1, 2] }) }),
    () => new Point(1, 2),
    () => new Map([["a", 1]]),
  ];
  if (depth > 6 || rand() < 0.3) return pick(leaves)();
  // Long arrays (written element by element) now and then, short ones (written whole) mostly.
  if (rand() < 0.5)
    return Array.from({ length: rand() < 0.08 ? 64 + Math.floor(rand() * 4) : Math.floor(rand() * 4) }, () =>
      randomValue(rand, depth + 2),
    );
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 4); i > 0; i--)
    o[pick(["a", "b", "c", "2", "1", "é", "\u202e", "__proto__x"])] = randomValue(rand, depth + 1);
  return o;
}

describe("jsonChunks", () => {
  it("joined, is jsonText exactly: 5,000 random values, indents 2 and 4", () => {
    const rand = seededRandom(2026_11_23);
    for (let i = 0; i < 5_000; i++) {
      const v = randomValue(rand, 0);
      for (const space of [2, 4])
        expect([...jsonChunks(v, space)].join(""), JSON.stringify(jsonText(v, space))).toBe(jsonText(v, space));
    }
  });

  it("a large array is many pieces, none of them the whole", () => {
    const plan = {
      resource_changes: Array.from({ length: 1_000 }, (_, i) => ({
        address: `r${i}`,
        change: { action: "no-op", before: { members: ["user:a@example.com"] } },
      })),
    };
    const pieces = [...jsonChunks(plan, 2)];
    expect(pieces.join("")).toBe(jsonText(plan, 2));
    // A piece per change (with the separator before it), none much longer than one change.
    expect(pieces.length).toBeGreaterThan(1_000);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(jsonText(plan.resource_changes[0], 2).length + 100);
  });

  it("top-level odd values", () => {
    for (const v of [undefined, null, 0, "x", () => 1, [], {}, [undefined], { a: undefined }])
      expect([...jsonChunks(v, 2)].join("")).toBe(jsonText(v, 2));
  });
});
