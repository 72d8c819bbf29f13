// The YAML files of a tree (node_modules and dot folders aside), for tests that read them all.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (f === "node_modules" || f.startsWith(".")) return [];
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(f) ? [p] : [];
  });
}
