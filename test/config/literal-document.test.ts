// A stack whose text has no "${" and no "fn::" is loaded without walking its resources for
// references (SourceDocument.literalDocument); any other keeps its references and load-time values.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { SourceDocument } from "../../src/yaml/source.js";

const head = "name: s\nprovider:\n  project: p\n  location: us-central1\n";
const binding = (members: string) =>
  `  b:\n    type: cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n` +
  `      name: rp\n      role: roles/backupdr.viewer\n      members: ${members}\n`;

describe("literal documents", () => {
  it("is literal only for the fast path's own value of a text without ${ or fn::", () => {
    const plain = new SourceDocument("s.yaml", `${head}resources: {}\n`);
    const doc = plain.toJS();
    expect(plain.literalDocument(doc)).toBe(true);
    expect(plain.literalDocument({ ...(doc as object) })).toBe(false);
    for (const text of [`${head}# \${x}\n`, `${head}description: 'fn::'\n`, `${head}x: &a 1\ny: *a\n`]) {
      const src = new SourceDocument("s.yaml", text);
      expect(src.literalDocument(src.toJS())).toBe(false);
    }
  });

  it("still finds the references of a stack that has one", () => {
    const text = `${head}variables:\n  who: user:a@example.com\nresources:\n${binding("['${who}']")}`;
    const r = parseStack("s.yaml", text);
    expect(r.diagnostics).toEqual([]);
    expect(r.stack!.resources.get("b")!.refs.map((x) => x.root)).toEqual(["who"]);
  });

  it("loads a literal stack with no references and no load-time values", () => {
    const r = parseStack("s.yaml", `${head}resources:\n${binding("[user:a@example.com]")}`);
    expect(r.diagnostics).toEqual([]);
    const b = r.stack!.resources.get("b")!;
    expect(b.refs).toEqual([]);
    expect(b.loadTimeProperties).toBeUndefined();
  });
});
