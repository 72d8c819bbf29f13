// Module resolution hook (node:module register): an import of dist/connect/cloud.js from anywhere
// but ./cloud.mjs gets ./cloud.mjs instead, which wraps the real one.
const WRAPPER = new URL("./cloud.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (context.parentURL !== WRAPPER && resolved.url.endsWith("/dist/connect/cloud.js"))
    return { ...resolved, url: WRAPPER, shortCircuit: true };
  return resolved;
}
