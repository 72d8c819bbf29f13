// Reads the file import --from-pulumi / --from-terraform is given: a regular file of JSON (read
// as YAML, of which JSON is a part, so that every value keeps its line and column).
import { UserError, error } from "../diagnostics/diagnostic.js";
import { SourceDocument, errorAt, type DocPath } from "../yaml/source.js";
import { decodeUtf8 } from "../base/utf8.js";
import { InputFileError, MAX_DATA_BYTES, readInputFile } from "../fs/input-file.js";

/** A source file read: its document (for positions) and its value. */
export interface SourceFile {
  src: SourceDocument;
  root: unknown;
}

/** The file at `path` as a document; anything unreadable is a UserError naming where. */
export function readSourceFile(path: string, what: string): SourceFile {
  let bytes: Buffer;
  try {
    bytes = readInputFile(path, what, MAX_DATA_BYTES);
  } catch (e) {
    if (e instanceof InputFileError) throw e.userError({ code: "migrate/file" });
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "it does not exist" : code === "EACCES" ? "permission denied" : (e as Error).message;
    throw new UserError(error(`cannot read ${what} ${path}: ${why}`, { code: "migrate/file", file: path }));
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    const { line, column } = decoded.invalid;
    throw new UserError(
      error(`${what} ${path} is not valid UTF-8`, { code: "migrate/file", file: path, line, column }),
    );
  }
  const src = new SourceDocument(path, decoded.text, { fast: false });
  const bad = src.errors[0] ?? src.structureErrors[0];
  if (bad) {
    const { line, column } = src.positionAt("pos" in bad ? bad.pos[0] : bad.offset);
    const why = "message" in bad ? bad.message.split("\n")[0] : bad.summary;
    throw new UserError(
      error(`${what} ${path} is not JSON: ${why}`, { code: "migrate/file", file: path, line, column }),
    );
  }
  return { src, root: src.toJS() };
}

/** A UserError at `path` in the file. */
export function refuse(src: SourceDocument, path: DocPath, summary: string, detail?: string): UserError {
  return new UserError(errorAt(src, path, summary, detail !== undefined ? { detail } : {}));
}

/** `v` when it is a JSON object. */
export function objectOf(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
