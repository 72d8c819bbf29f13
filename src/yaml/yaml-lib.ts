// The yaml library (about 70 CommonJS modules), required on its first use: the fast path
// (fast-yaml.ts) reads most stacks, and yaml's document is then built only for a diagnostic's
// position or a text the fast path declines.
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

let lib: typeof Yaml | undefined;

export function yaml(): typeof Yaml {
  return (lib ??= createRequire(import.meta.url)("yaml") as typeof Yaml);
}
