// The module hooks of record-loads.mjs (they run on the loader's thread).
import { appendFileSync } from "node:fs";

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.CONVERGE_TEST_LOAD_LOG, `${resolved.url}\n`);
  return resolved;
}
