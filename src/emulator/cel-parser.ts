// The emulator's CEL parser (@bufbuild/cel, about 130 modules), required on its first use, so an
// emulator (and the embedded one inside the CLI) that never checks a condition does not load it.
// Its own loader, not the client's (src/iam/cel.ts): the emulator shares no code with the client.
import { createRequire } from "node:module";
import type * as Cel from "@bufbuild/cel";

let cel: typeof Cel | undefined;

/** @bufbuild/cel's parse, from its CommonJS build (loadable synchronously). */
export function parseCel(expression: string): ReturnType<typeof Cel.parse> {
  cel ??= createRequire(import.meta.url)("@bufbuild/cel") as typeof Cel;
  return cel.parse(expression);
}
