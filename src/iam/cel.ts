// The client's CEL parser (../cel-parser.ts: @bufbuild/cel's parser alone, loaded on first use,
// so start-up does not load it and only a stack with an IAM condition does).
import { type CelParse, celParser } from "../cel-parser.js";

export function parse(expression: string): ReturnType<CelParse> {
  return celParser()(expression);
}
