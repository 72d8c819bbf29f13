// Issue 14: diagnostics in Terraform's JSON form carry a range whose positions give line, column
// (in characters) and byte offset (in the file's UTF-8 bytes), to the end of the line's text.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileTexts, rangeAt, terraformDiagnostic } from "../../src/diagnostics/terraform-diagnostic.js";
import { decode, Diagnostic } from "../support/terraform-json-decoder.js";

describe("rangeAt", () => {
  it("counts bytes in UTF-8 and columns in characters; ends at the line's last non-blank", () => {
    // "é" is 2 bytes, "😀" 4 bytes and 2 UTF-16 units: the column of "x" on line 2 is 6 (a
    // diagnostic's column counts characters too).
    const text = "a: 1\nb: é😀x  \nc: 3\n";
    expect(rangeAt("s.yaml", text, 2, 6)).toEqual({
      filename: "s.yaml",
      start: { line: 2, column: 6, byte: 5 + 3 + 2 + 4 },
      end: { line: 2, column: 7, byte: 5 + 3 + 2 + 4 + 1 },
    });
  });

  it("a byte order mark and CRLF line ends are bytes of the file too", () => {
    const text = "\uFEFFname: t\r\nrole: admin\r\n";
    expect(rangeAt("s.yaml", text, 2, 7)).toEqual({
      filename: "s.yaml",
      start: { line: 2, column: 7, byte: 3 + 9 + 6 },
      end: { line: 2, column: 12, byte: 3 + 9 + 11 },
    });
  });

  it("no such line: no range; a column past the end: the line's end", () => {
    expect(rangeAt("s.yaml", "a: 1\n", 3, 1)).toBeUndefined();
    expect(rangeAt("s.yaml", "a: 1\n", 1, 40)!.start).toEqual({ line: 1, column: 5, byte: 4 });
  });
});

describe("terraformDiagnostic", () => {
  it(
    "keeps severity, summary, detail and address, names the file relative to the " +
      "working directory, and decodes as terraform-json's",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "converge-tfdiag-"));
      const file = join(dir, "stack.yaml");
      writeFileSync(file, "name: t\nresources:\n  x:\n    type: nope\n");
      const d = terraformDiagnostic(
        {
          severity: "error",
          summary: "unknown type",
          detail: "d",
          address: "x",
          file,
          line: 4,
          column: 11,
          path: "resources.x.type",
        },
        fileTexts(),
        dir,
      );
      expect(d).toEqual({
        severity: "error",
        summary: "unknown type",
        detail: "d",
        address: "x",
        range: {
          filename: "stack.yaml",
          start: { line: 4, column: 11, byte: 8 + 11 + 5 + 10 },
          end: { line: 4, column: 15, byte: 8 + 11 + 5 + 14 },
        },
      });
      expect(() => decode(Diagnostic, d)).not.toThrow();
      expect(terraformDiagnostic({ severity: "warning", summary: "no place" }, fileTexts())).toEqual({
        severity: "warning",
        summary: "no place",
      });
    },
  );

  it("a file that is not UTF-8: the position the loader found, exact up to the bad byte, without a span", () => {
    const dir = mkdtempSync(join(tmpdir(), "converge-tfdiag-"));
    const file = join(dir, "latin1.yaml");
    writeFileSync(file, Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x74, 0x65, 0x0a])); // "a: ét\n" in Latin-1
    const d = terraformDiagnostic(
      { severity: "error", summary: "not UTF-8", file, line: 1, column: 4 },
      fileTexts(),
      dir,
    );
    expect(d.range).toEqual({
      filename: "latin1.yaml",
      start: { line: 1, column: 4, byte: 3 },
      end: { line: 1, column: 4, byte: 3 },
    });
  });
});
