// The linter is part of the test suite: typescript-eslint's recommended rules (eslint.config.js)
// over the whole repository, with no error and no warning.
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

describe("lint", () => {
  // Linting the whole repository takes a minute or two on a loaded machine: its own bound.
  it("finds nothing in src/, test/, bench/, scripts/ and bin/", { timeout: 900_000 }, async () => {
    const eslint = new ESLint({ cwd: process.cwd() });
    const results = await eslint.lintFiles(["src", "test", "bench", "scripts", "bin", "*.js"]);
    const found = results.flatMap((r) =>
      r.messages.map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId ?? "parse"}: ${m.message}`),
    );
    expect(found).toEqual([]);
  });
});
