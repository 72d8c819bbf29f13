// The loader asks whether a name is declared without building a Set of every name (100,000 at the
// bench): declaredNames must answer and list as the Set of the sections' keys did.
import { describe, expect, it } from "vitest";
import { declaredNames } from "../../src/config/load.js";
import { seededRandom } from "../support/seeded-random.js";

const WORDS = [
  "a",
  "b",
  "r0",
  "r1",
  "1",
  "01",
  "toString",
  "constructor",
  "__proto__",
  "hasOwnProperty",
  "valueOf",
  "x-y",
  "é",
  "",
];

describe("declared names", () => {
  it("answers and lists as new Set([...Object.keys(config), ...variables, ...resources])", () => {
    const rand = seededRandom(5);
    for (let run = 0; run < 3000; run++) {
      // JSON.parse makes "__proto__" an own key, as a YAML mapping does.
      const section = () => {
        const keys = WORDS.filter(() => rand() < 0.3);
        return JSON.parse(`{${keys.map((k) => `${JSON.stringify(k)}: 1`).join(", ")}}`) as Record<string, unknown>;
      };
      const sections = [section(), section(), section()];
      const set = new Set([...Object.keys(sections[0]!), ...Object.keys(sections[1]!), ...Object.keys(sections[2]!)]);
      const names = declaredNames(sections);
      expect(names.list()).toStrictEqual([...set]);
      for (const w of [...WORDS, "missing"]) expect(names.has(w), w).toBe(set.has(w));
    }
  });
});
