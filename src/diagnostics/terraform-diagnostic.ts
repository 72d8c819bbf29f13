// Diagnostics as Terraform prints them in JSON (validate --json, the streamed UI's diagnostic
// messages): severity, summary, detail, address and a range in the file, whose positions carry a
// byte offset as well as line and column. The range goes from the position the diagnostic names
// to the end of that line's text.
import { readFileSync } from "node:fs";
import type { TfDiagnostic, TfPos, TfRange } from "../generated/schemas.js";
import type { Diagnostic } from "./diagnostic.js";
import { decodeUtf8 } from "../config/utf8.js";

/** A file's text by name, read once (undefined when it cannot be read or is not UTF-8). */
export type SourceTexts = (file: string) => string | undefined;

export function fileTexts(): SourceTexts {
  const cache = new Map<string, string | undefined>();
  return (file) => {
    if (!cache.has(file)) {
      let text: string | undefined;
      try {
        const decoded = decodeUtf8(readFileSync(file));
        text = decoded.ok ? decoded.text : undefined;
      } catch {
        text = undefined;
      }
      cache.set(file, text);
    }
    return cache.get(file);
  };
}

const codePoints = (s: string) => [...s].length;

function pos(text: string, lineStart: number, line: number, offset: number): TfPos {
  return { line, column: codePoints(text.slice(lineStart, offset)) + 1, byte: Buffer.byteLength(text.slice(0, offset), "utf8") };
}

/**
 * The range of a position given as line and column (the column in UTF-16 code units, as the
 * YAML parser counts): to the end of the line without trailing blanks; undefined when the file
 * has no such line.
 */
export function rangeAt(filename: string, text: string, line: number, column: number): TfRange | undefined {
  let lineStart = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", lineStart);
    if (nl < 0) return undefined;
    lineStart = nl + 1;
  }
  const nl = text.indexOf("\n", lineStart);
  const lineEnd = nl < 0 ? text.length : nl;
  const start = Math.min(lineStart + Math.max(column, 1) - 1, lineEnd);
  const end = Math.max(start, lineStart + text.slice(lineStart, lineEnd).trimEnd().length);
  return { filename, start: pos(text, lineStart, line, start), end: pos(text, lineStart, line, end) };
}

/** A converge diagnostic as Terraform's (its document path has no place there: the range says where). */
export function terraformDiagnostic(d: Diagnostic, texts: SourceTexts): TfDiagnostic {
  const text = d.file !== undefined && d.line !== undefined ? texts(d.file) : undefined;
  const range = text !== undefined ? rangeAt(d.file!, text, d.line!, d.column ?? 1) : undefined;
  return {
    severity: d.severity,
    summary: d.summary,
    ...(d.detail !== undefined ? { detail: d.detail } : {}),
    ...(d.address !== undefined ? { address: d.address } : {}),
    ...(range ? { range } : {}),
  };
}
