// The emulator's CEL parser (../cel-parser.ts: @bufbuild/cel's parser alone, loaded on first use),
// so an emulator (and the embedded one inside the CLI) that never checks a condition does not
// load it. What the emulator makes of the tree is its own (./conditions.ts).
import { type CelParse, celParser } from "../cel-parser.js";

export function parseCel(expression: string): ReturnType<CelParse> {
  return celParser()(expression);
}
