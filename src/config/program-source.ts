// Where the parts of a stack built by a program (src/sdk) were written: a call site (file, line,
// column) per document path, so a diagnostic about a resource points at its constructor call.
import { type DocPath, type Position, SourceDocument } from "../yaml/source.js";

/** Looks up a position by document path (as JSON text). */
export const pathKey = (path: DocPath): string => JSON.stringify(path);

export class ProgramSource extends SourceDocument {
  constructor(
    file: string,
    private readonly positions: ReadonlyMap<string, Position>,
  ) {
    super(file, "");
  }

  /** The call site recorded for `path` or its nearest recorded ancestor; else the file's start. */
  override position(path: DocPath): Position {
    for (let depth = path.length; depth >= 0; depth--) {
      const found = this.positions.get(pathKey(path.slice(0, depth)));
      if (found) return found;
    }
    return { line: 1, column: 1 };
  }
}
