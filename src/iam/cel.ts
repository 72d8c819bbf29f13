// @bufbuild/cel (with @bufbuild/protobuf and re2, about 130 modules), required on its first use:
// only a stack or an emulator call with an IAM condition parses CEL, so start-up does not load it.
import { createRequire } from "node:module";
import type * as Cel from "@bufbuild/cel";

let cel: typeof Cel | undefined;

/** @bufbuild/cel's parse (its CommonJS build, which require can load synchronously). */
export function parse(expression: string): ReturnType<typeof Cel.parse> {
  cel ??= createRequire(import.meta.url)("@bufbuild/cel") as typeof Cel;
  return cel.parse(expression);
}
