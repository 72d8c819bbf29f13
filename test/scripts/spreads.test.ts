// No call in src/ spreads an array into its arguments (scripts/check-spreads.mjs): past about
// 120,000 items V8 throws RangeError, as a destroy plan of 100,000 resources did.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without type declarations
import { spreadCalls } from "../../scripts/check-spreads.mjs";

describe("spread calls", () => {
  it("none in src/", () => {
    expect(spreadCalls()).toEqual([]);
  });

  it("are found, and a function's own rest parameter passed on is not one", () => {
    const dir = mkdtempSync(join(tmpdir(), "converge-spreads-"));
    try {
      const file = join(dir, "x.ts");
      writeFileSync(
        file,
        [
          "const a: number[] = [];",
          "a.push(...[1, 2]);",
          "Math.max(...a);",
          "new Set(...[a]);",
          "const f = (...args: number[]) => Math.min(...(args as number[]));",
          "const g = (xs: number[]) => (...ys: number[]) => Math.min(...xs, ...ys);",
          "const b = [...a, ...a];",
          "const o = { ...{ a } };",
        ].join("\n"),
      );
      expect(spreadCalls([file]).map((v: string) => v.replace(/^.*x\.ts:/, ""))).toEqual([
        "2: ...[1, 2] spreads into a call (use pushAll or maxOf from src/base/arrays.ts)",
        "3: ...a spreads into a call (use pushAll or maxOf from src/base/arrays.ts)",
        "4: ...[a] spreads into a call (use pushAll or maxOf from src/base/arrays.ts)",
        "6: ...xs spreads into a call (use pushAll or maxOf from src/base/arrays.ts)",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
