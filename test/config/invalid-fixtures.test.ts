// Every malformed stack in test/fixtures/invalid is rejected by the loader with each expected
// error at its exact file:line:column and document path, all reported together, and nothing else.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadStackFile, parseStack } from "../../src/config/load.js";
import { INVALID_DIR, INVALID_FIXTURES } from "../fixtures/invalid/expectations.js";

describe("malformed stack fixtures", () => {
  it("has at least 15 fixtures, one expectation per file and one file per expectation", () => {
    const files = readdirSync(INVALID_DIR)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(15);
    expect(INVALID_FIXTURES.map((f) => f.file).sort()).toEqual(files);
    for (const f of files) expect(f).toMatch(/^\d\d-[a-z0-9-]+\.yaml$/);
  });

  describe.each(INVALID_FIXTURES)("$file ($category)", (fx) => {
    const path = join(INVALID_DIR, fx.file);
    const result = loadStackFile(path);
    const errors = result.diagnostics.filter((d) => d.severity === "error");

    it("does not produce a stack", () => {
      expect(result.stack).toBeUndefined();
    });

    it.each(fx.errors)("reports $line:$column $path", (want) => {
      const at = errors.filter((d) => d.line === want.line && d.column === want.column);
      expect(
        at.map((d) => `${d.line}:${d.column} ${d.summary}`),
        `diagnostics: ${JSON.stringify(errors, null, 1)}`,
      ).not.toHaveLength(0);
      const match = at.find((d) => want.summary.every((s) => d.summary.includes(s)));
      expect(
        match,
        `no diagnostic at ${want.line}:${want.column} contains ` +
          `${JSON.stringify(want.summary)}; got ${JSON.stringify(at.map((d) => d.summary))}`,
      ).toBeDefined();
      expect(match!.file).toBe(path);
      if (want.path === null) expect(match!.path ?? "").toBe("");
      else expect(match!.path).toBe(want.path);
      if (want.address) expect(match!.address).toBe(want.address);
    });

    it(`reports exactly ${fx.errors.length} error(s), each once`, () => {
      expect(errors.map((d) => `${d.line}:${d.column} ${d.summary}`)).toHaveLength(fx.errors.length);
    });

    it("parseStack (no file system) agrees with loadStackFile", () => {
      const again = parseStack(path, readFileSync(path, "utf8"));
      expect(again.diagnostics).toEqual(result.diagnostics);
    });
  });
});
