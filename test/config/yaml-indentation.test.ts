// One indentation mistake is one error with one hint (issue 38, item 2), not three raw parser codes.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";

const stack = (role: string) =>
  `name: ind\nprovider:\n  project: p\n  location: us-central1\nresources:\n  viewers:\n    type: ` +
  `cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n      name: nightly\n${role}\n      ` +
  `members: ["user:a@example.com"]\n`;

describe("a YAML indentation mistake", () => {
  it.each([
    ["indented less than its siblings", "     role: roles/gkebackup.viewer", 10],
    ["indented more than its siblings", "        role: roles/gkebackup.viewer", 9],
  ])("%s: one error with the hint, positioned", (_name, line, at) => {
    const { diagnostics } = parseStack("stack.yaml", stack(line));
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      severity: "error",
      code: "yaml/indentation",
      file: "stack.yaml",
      line: at,
      summary: `YAML indentation mistake near line ${at}`,
    });
    expect(diagnostics[0]!.detail).toContain("The keys of one map start in the same column");
  });
});
