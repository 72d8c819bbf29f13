// @bufbuild/cel's parser, loaded on first use (start-up does not load it: only a stack or an
// emulator call with an IAM condition does), for both the client (src/iam/condition-check.ts)
// and the emulator (src/emulator/conditions.ts): each only parses CEL. A library loader is neutral: what
// each side does with the tree stays its own (test/emulator/independence.test.ts).
// Only the parser: the package's index also loads its type checker, evaluator, standard library,
// re2 and the protobuf runtime with the CEL descriptors (about 130 modules, 100 ms on the 2-core
// bench machine, a fifth of the quickstart's plan), where its parse.js needs three files (7 ms).
// The package exports only its index, so the parser is required by its path beside it; should a
// release move it, the index serves (the same function, the slower start), and
// test/cli/lazy-startup.test.ts, which pins the files loaded, says so.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type * as Cel from "@bufbuild/cel";

export type CelParse = typeof Cel.parse;

let parser: CelParse | undefined;

/** @bufbuild/cel's parse of `expression`, from its CommonJS build (which require loads synchronously). */
export function parseCel(expression: string): ReturnType<CelParse> {
  return (parser ??= loadCelParser(createRequire(import.meta.url)))(expression);
}

/** The parser's own file beside the package's index, else the index's parse (exported for tests). */
export function loadCelParser(require: { (id: string): unknown; resolve(id: string): string }): CelParse {
  const index = require.resolve("@bufbuild/cel");
  let own: { parse?: unknown } | undefined;
  try {
    own = require(join(dirname(index), "parse.js")) as { parse?: unknown };
  } catch {
    own = undefined;
  }
  return typeof own?.parse === "function" ? (own.parse as CelParse) : (require(index) as typeof Cel).parse;
}
