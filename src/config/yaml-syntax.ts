// The YAML parser's errors as a stack's diagnostics. One indentation mistake makes the parser
// report several errors in its own terms (BAD_INDENT, then a compact mapping and a multi-line
// implicit key at the same place): they are one error, with one hint, at the first of them.
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import type { SourceDocument } from "../yaml/source.js";

/** The parser's codes that an indentation mistake produces. */
const INDENTATION = new Set(["BAD_INDENT", "BLOCK_AS_IMPLICIT_KEY", "MULTILINE_IMPLICIT_KEY", "TAB_AS_INDENT"]);

const INDENT_HINT =
  "The keys of one map start in the same column, and a value nested under a key is indented " +
  "further than the key, with spaces (not tabs).";

/** The YAML syntax errors of `src`, the indentation ones as one. */
export function yamlSyntaxDiagnostics(src: SourceDocument): Diagnostic[] {
  const diags: Diagnostic[] = [];
  let indentation = false;
  for (const e of src.errors) {
    const { line, column } = src.positionAt(e.pos[0]);
    // (An unclosed flow collection is BAD_INDENT too: not an indentation mistake of block keys.)
    if (INDENTATION.has(e.code) && !/flow/i.test(e.message)) {
      if (indentation) continue;
      indentation = true;
      const said = `${e.message.split("\n")[0]} (${e.code})`;
      diags.push(
        error(`YAML indentation mistake near line ${line}`, {
          file: src.file,
          line,
          column,
          code: "yaml/indentation",
          detail: `${INDENT_HINT} The parser said: ${said}.`,
        }),
      );
      continue;
    }
    const second = e.code === "MULTIPLE_DOCS";
    const summary = second
      ? `a stack file holds one YAML document; found a second at ${line}:${column}`
      : `YAML syntax error: ${e.message.split("\n")[0]}`;
    diags.push(
      error(summary, {
        file: src.file,
        line,
        column,
        detail: second ? "Remove the second document (from its --- on), or put it in a stack file of its own." : e.code,
      }),
    );
  }
  return diags;
}
