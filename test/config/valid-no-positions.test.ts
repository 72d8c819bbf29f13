// Validation at the speed of parsing (issue 45): a valid stack is read without the diagnostics
// machinery. Finding a position walks the whole text (an outline of its lines, the line starts),
// so a valid stack asks for none.
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { SourceDocument } from "../../src/yaml/source.js";
import { BINDING, MEMBER, STACK_HEAD } from "../fixtures/builders.js";

// A binding with members written flow-style and a member resource: the usual shapes.
const STACK = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:bob@example.com] }
  invoker:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: "user:dana@example.com" }
`;

afterEach(() => vi.restoreAllMocks());

describe("a valid stack", () => {
  it("is loaded without finding a single position", () => {
    const position = vi.spyOn(SourceDocument.prototype, "position");
    const r = parseStack("stack.yaml", STACK);
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(position).not.toHaveBeenCalled();
  });

  it("an invalid provider field still has its position", () => {
    const r = parseStack("stack.yaml", STACK.replace("project: my-project", 'project: ""'));
    expect(r.diagnostics.find((d) => d.code === "stack/provider")).toMatchObject({ line: 3, column: 12 });
  });
});
