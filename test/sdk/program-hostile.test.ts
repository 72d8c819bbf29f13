// A program run in the caller's thread (the Automation API's way): a throwing getter on the
// stack context and a huge error message are the program's failure, as under the CLI
// (test/e2e/hostile-programs.test.ts).
import { describe, expect, it } from "vitest";
import { loadProgram } from "../../src/sdk/program.js";

const FILE = new URL(import.meta.url).pathname;

describe("a hostile program in the caller's thread", () => {
  it("a getter on the stack that throws is the program's failure, not an exception out of the load", async () => {
    const loaded = await loadProgram(
      (stack) => {
        stack.name = "g";
        Object.defineProperty(stack, "provider", {
          get() {
            throw new Error("no provider");
          },
        });
      },
      FILE,
      "g",
    );
    expect(loaded.stack).toBeUndefined();
    expect(loaded.diagnostics.map((d) => d.summary)).toEqual(["the program failed: no provider"]);
    expect(loaded.diagnostics[0]!.line).toBeGreaterThan(0);
  });

  it("a 50 MB error message is cut, saying its full length", async () => {
    const loaded = await loadProgram(
      () => {
        throw new Error("x".repeat(52_428_800));
      },
      FILE,
      "h",
    );
    const summary = loaded.diagnostics[0]!.summary;
    expect(summary.length).toBeLessThan(3_000);
    expect(summary).toMatch(/^the program failed: x+… \(52428800 characters in all\)$/);
  });
});
