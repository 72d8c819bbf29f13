// What the cloud sends is shown as text: a member or a condition title with terminal escapes or
// Markdown cannot colour a terminal, add a table row, open HTML or a link in drift's reports.
import { describe, expect, it } from "vitest";
import { driftMarkdown, driftText } from "../../src/cli/render/drift-text.js";
import type { DriftFinding } from "../../src/plan/drift.js";

const hostile: DriftFinding = {
  class: "unmanaged",
  object: "projects/p/locations/l/restorePlans/r",
  kind: "restorePlan",
  role: "roles/gkebackup.viewer",
  member: "user:a@example.com",
  condition: { title: "t\u001b[31m|red\n| x | <details>[link](http://x)", expression: "true" },
};

describe("drift reports escape text from the cloud", () => {
  it("text: no control character reaches the terminal", () => {
    const out = driftText([hostile], 1);
    expect(out).not.toContain("\u001b");
    expect(out.trimEnd().split("\n")).toHaveLength(3);
  });

  it("markdown: one row per finding, no HTML, no link", () => {
    const out = driftMarkdown([hostile], 1, "s");
    const rows = out.split("\n").filter((l) => l.startsWith("|"));
    expect(rows).toHaveLength(3);
    expect(rows[2]!.split(/(?<!\\)\|/).length).toBe(8);
    expect(out).not.toContain("<details>");
    expect(out).not.toMatch(/[^\\]\[link\]/);
    expect(out).not.toContain("\u001b");
  });
});
