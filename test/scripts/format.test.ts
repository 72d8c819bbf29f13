// The format is part of the test suite: every file Prettier covers is formatted, and no line is
// longer than 120 characters (scripts/check-format.mjs; `npm run format` fixes what Prettier can).
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without type declarations
import { formatProblems } from "../../scripts/check-format.mjs";

describe("format", () => {
  // About 900 files: a minute of one core on a loaded machine, its own bound.
  it("every file is as Prettier writes it, with no line over 120 characters", { timeout: 900_000 }, async () => {
    expect(await formatProblems()).toEqual([]);
  });
});
