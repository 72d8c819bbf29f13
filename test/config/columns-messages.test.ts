// Where diagnostics point and what a few of them say: columns count characters as editors do
// (Unicode code points; a byte order mark is not one), the same in text and in validate --json;
// a second YAML document and a stack name of the wrong form say what is expected.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { readInputs } from "../../src/config/var-files.js";
import { decodeUtf8 } from "../../src/base/utf8.js";
import { rangeAt } from "../../src/diagnostics/terraform-diagnostic.js";

const FILE = "/virtual/stack.yaml";
const errors = (text: string) =>
  parseStack(FILE, text)
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => `${d.line}:${d.column} ${d.summary}`);
const dir = mkdtempSync(join(tmpdir(), "converge-columns-"));

describe("columns count characters (code points), not UTF-16 units or a byte order mark", () => {
  const STACK = `name: t
provider:
  project: p
  location: l
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: ["é😀", bogus]
`;

  it("after a character outside the BMP (the hostile pos.yaml: 12:24 in text, 23 in --json)", () => {
    const [first, second] = errors(STACK);
    expect(first).toMatch(/^11:17 /);
    expect(second).toMatch(/^11:23 viewers: member "bogus"/);
    // validate --json gives the same column for the same diagnostic
    expect(rangeAt("s.yaml", STACK, 11, 23)!.start.column).toBe(23);
  });

  it("a byte order mark on line 1 is not a column (the hostile bom2.yaml: 1:8 with, 1:7 without)", () => {
    expect(errors('\uFEFFname: "bad name"\n').map((e) => e.split(" ")[0])).toEqual(["1:7"]);
    expect(errors('name: "bad name"\n').map((e) => e.split(" ")[0])).toEqual(["1:7"]);
    expect(rangeAt("s.yaml", '\uFEFFname: "bad name"\n', 1, 7)!.start).toEqual({ line: 1, column: 7, byte: 3 + 6 });
  });

  it("YAML syntax errors and structure errors too", () => {
    expect(errors('\uFEFFname: t\nvariables:\n  a: "😀😀" x\n').map((e) => e.split(" ")[0])).toEqual(["3:11"]);
    expect(errors("\uFEFFname: *nope\n").map((e) => e.split(" ")[0])).toEqual(["1:7"]);
  });

  it("a var file's errors and values, and bytes that are not UTF-8", () => {
    const f = join(dir, "v.yaml");
    writeFileSync(f, "\uFEFFa: [😀, *nope]\n");
    expect(readInputs({ varFiles: [f] }).diagnostics.map((d) => `${d.line}:${d.column}`)).toEqual(["1:8"]);
    const bad = Buffer.concat([Buffer.from("\uFEFFa: 😀"), Buffer.from([0xff])]);
    expect(decodeUtf8(bad)).toMatchObject({ ok: false, invalid: { line: 1, column: 5 } });
  });
});

describe("messages", () => {
  it("a second YAML document: the stack holds one, and where the second starts", () => {
    expect(errors("name: a\n---\nname: b\n")).toEqual([
      "2:1 a stack file holds one YAML document; found a second at 2:1",
    ]);
    const f = join(dir, "two.yaml");
    writeFileSync(f, "a: 1\n---\nb: 2\n");
    expect(readInputs({ varFiles: [f] }).diagnostics.map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([
      `2:1 --var-file ${f}: a var file holds one YAML document; found a second at 2:1`,
    ]);
  });

  it("a stack name of the wrong form states the allowed pattern", () => {
    expect(errors('name: "a/b"\n')).toEqual([
      '1:7 name: "a/b" is not of the expected form: it must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$',
    ]);
  });
});
