// A program stack outside the clone whose package is not installed beside it: the error names the
// import's line and the command that installs the package, on lines of their own (the module
// resolver's multi-line message was printed on one line with literal "\n"s). A stack still
// importing the package's old name, "converge", is told the new one.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, runCli, useTempDir } from "./helpers.js";

const ws = useTempDir("converge-missing-package-");
const BODY = `\nexport default () => {\n  void EndpointIamMember;\n};\n`;

async function planOf(file: string, source: string) {
  await writeFile(join(ws.dir, file), source);
  return runCli(["plan", "-f", file], { cwd: ws.dir, timeoutMs: 60_000 });
}

describe("a program stack whose package is not installed", () => {
  it("says where it is imported and how to install it, without escaped newlines", async () => {
    const r = await planOf("stack.ts", `// a stack\nimport { EndpointIamMember } from "converge-iam";\n${BODY}`);
    expectExit(r, 1);
    expect(r.stderr).not.toContain("\\n");
    expect(r.stderr).toContain(
      "stack.ts:2:35: Error: the package converge-iam is not installed where stack.ts can import it",
    );
    expect(r.stderr).toContain("npm install --save-dev converge-iam");
  });

  it("names the package's new name to a stack that imports the old one", async () => {
    const r = await planOf("old.ts", `import { EndpointIamMember } from 'converge';\n${BODY}`);
    expectExit(r, 1);
    expect(r.stderr).not.toContain("\\n");
    expect(r.stderr).toContain("old.ts:1:35: Error: the package converge was renamed converge-iam");
    expect(r.stderr).toContain(`from "converge-iam"`);
  });

  it("an .mjs stack's other missing package is named too (ESM resolution)", async () => {
    const r = await planOf("other.mjs", `import left from "left-pad-not-here";\nexport default () => left;\n`);
    expectExit(r, 1);
    expect(r.stderr).not.toContain("\\n");
    expect(r.stderr).toContain(
      "other.mjs:1:18: Error: the package left-pad-not-here is not installed where other.mjs can import it",
    );
  });
});
