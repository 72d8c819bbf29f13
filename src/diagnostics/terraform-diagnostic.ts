// Diagnostics as Terraform prints them in JSON (validate --json, the streamed UI's diagnostic
// messages): severity, summary, detail, address and a range in the file, whose positions carry a
// byte offset as well as line and column. The range goes from the position the diagnostic names
// to the end of that line's text.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import type { TfDiagnostic, TfPos, TfRange } from "../generated/schemas.js";
import type { Diagnostic } from "./diagnostic.js";
import { columnAt, decodeUtf8, offsetOfColumn } from "../base/utf8.js";

/** A file's text by name, read once (undefined when it cannot be read). `exact` is false when
 *  the file is not UTF-8: its text is then decoded with U+FFFD for what is not (the diagnostic
 *  is about the first such byte, and the text before it is exact). */
export type SourceTexts = (file: string) => { text: string; exact: boolean } | undefined;

const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

export function fileTexts(): SourceTexts {
  const cache = new Map<string, { text: string; exact: boolean } | undefined>();
  return (file) => {
    if (!cache.has(file)) {
      let source: { text: string; exact: boolean } | undefined;
      try {
        const bytes = readFileSync(file);
        const decoded = decodeUtf8(bytes);
        source = decoded.ok ? { text: decoded.text, exact: true } : { text: lenient.decode(bytes), exact: false };
      } catch {
        source = undefined;
      }
      cache.set(file, source);
    }
    return cache.get(file);
  };
}

function pos(text: string, lineStart: number, line: number, offset: number): TfPos {
  return { line, column: columnAt(text, lineStart, offset), byte: Buffer.byteLength(text.slice(0, offset), "utf8") };
}

/**
 * The range of a position given as line and column (the column in characters, as every
 * diagnostic counts it: see columnAt): to the end of the line without trailing blanks (or, `toLineEnd` false,
 * the position alone); undefined when the file has no such line.
 */
export function rangeAt(
  filename: string,
  text: string,
  line: number,
  column: number,
  toLineEnd = true,
): TfRange | undefined {
  let lineStart = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", lineStart);
    if (nl < 0) return undefined;
    lineStart = nl + 1;
  }
  const nl = text.indexOf("\n", lineStart);
  const lineEnd = nl < 0 ? text.length : nl;
  const start = offsetOfColumn(text, lineStart, lineEnd, column);
  const end = toLineEnd ? Math.max(start, lineStart + text.slice(lineStart, lineEnd).trimEnd().length) : start;
  return { filename, start: pos(text, lineStart, line, start), end: pos(text, lineStart, line, end) };
}

/** A converge diagnostic as Terraform's (its document path has no place there: the range says
 *  where). The file is named as on stderr: relative to the working directory. */
export function terraformDiagnostic(d: Diagnostic, texts: SourceTexts, cwd = process.cwd()): TfDiagnostic {
  const source = d.file !== undefined && d.line !== undefined ? texts(d.file) : undefined;
  const range = source
    ? rangeAt(relative(cwd, d.file!) || d.file!, source.text, d.line!, d.column ?? 1, source.exact)
    : undefined;
  return {
    severity: d.severity,
    summary: d.summary,
    ...(d.detail !== undefined ? { detail: d.detail } : {}),
    ...(d.address !== undefined ? { address: d.address } : {}),
    ...(range ? { range } : {}),
  };
}
