// The size limits (docs/ARCHITECTURE.md): no function in src/ over 80 lines, no file over 400
// (generated code aside), checked by scripts/check-sizes.mjs, here so that `npm test` enforces it.
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without type declarations
import { violations } from "../../scripts/check-sizes.mjs";

describe("size limits", () => {
  it("no function in src/ is longer than 80 lines and no file longer than 400", () => {
    expect(violations()).toEqual([]);
  });
});
