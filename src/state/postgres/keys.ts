// Advisory lock keys: two int4 from a sha256 of the parts, so the (schema, stack, workspace)
// lock of one converge schema never collides with another's, nor with the migration lock.
import { createHash } from "node:crypto";

export function advisoryKey(...parts: string[]): [number, number] {
  const h = createHash("sha256").update(["converge", ...parts].join("\u0000")).digest();
  return [h.readInt32BE(0), h.readInt32BE(4)];
}
