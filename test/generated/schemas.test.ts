import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("generated types", () => {
  it("src/generated/schemas.ts matches schemas/ (run `npm run gen:types` when this fails)", () => {
    let out = "";
    let code = 0;
    try {
      out = execFileSync(process.execPath, ["scripts/gen-types.mjs", "--check"], { encoding: "utf8", stdio: "pipe" });
    } catch (e) {
      const err = e as { status: number; stderr: string };
      code = err.status;
      out = err.stderr;
    }
    expect(out).toBe("");
    expect(code).toBe(0);
  });
});
