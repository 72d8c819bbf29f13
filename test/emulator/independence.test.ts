// The emulator is the oracle of the end-to-end tests, so it must not reach its verdicts with the
// client's code: nothing it loads, directly or through another module, may come from the client's
// IAM rules, cloud client, configuration, drivers or planner. Shared code is neutral naming
// (src/gcp/), schemas and generated types.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SRC = join(ROOT, "src");
const FORBIDDEN = ["iam", "cloud", "config", "drivers", "plan"].map((d) => join(SRC, d) + "/");

/** Module specifiers of static imports, re-exports and dynamic imports in a TypeScript file. */
function importSpecifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [/\bfrom\s+["']([^"']+)["']/g, /\bimport\s+["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out;
}

/** The .ts file a relative specifier designates (".js" in ESM specifiers is the .ts source). */
function resolveLocal(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), `${base}.ts`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${relative(ROOT, from)} imports ${spec}, which resolves to no source file`);
}

/** Every import edge (importer → imported source file) reachable from `roots`. */
function reachableEdges(roots: string[]): [string, string][] {
  const seen = new Set<string>(roots);
  const queue = [...roots];
  const edges: [string, string][] = [];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const spec of importSpecifiers(readFileSync(file, "utf8"))) {
      const target = resolveLocal(file, spec);
      if (!target) continue;
      edges.push([file, target]);
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return edges;
}

const forbidden = (file: string): boolean => FORBIDDEN.some((dir) => file.startsWith(dir));

const emulatorFiles = (): string[] =>
  readdirSync(join(SRC, "emulator"))
    .filter((f) => /\.tsx?$/.test(f))
    .map((f) => join(SRC, "emulator", f));

describe("the emulator's independence from the client", () => {
  it("finds the imports it scans (the scanner is not blind)", () => {
    const specs = importSpecifiers('import a from "./a.js";\nexport { b } from "../b.js";\nimport type { C } from "../c.js";\nimport "./side.js";\nawait import("./lazy.js");');
    expect(specs.sort()).toEqual(["../b.js", "../c.js", "./a.js", "./lazy.js", "./side.js"]);
    // The client's own modules do import what the emulator must not: the scan would see it.
    const client = reachableEdges([join(SRC, "cloud", "policy-engine.ts")]);
    expect(client.some(([, to]) => to.startsWith(join(SRC, "iam") + "/"))).toBe(true);
  });

  it("loads nothing from src/iam, src/cloud, src/config, src/drivers or src/plan, even indirectly", () => {
    const edges = reachableEdges(emulatorFiles());
    // It does follow imports out of src/emulator/ (into src/gcp/, src/schemas/, …).
    expect(edges.some(([, to]) => !to.startsWith(join(SRC, "emulator") + "/"))).toBe(true);
    const offending = edges.filter(([from, to]) => forbidden(to) && !forbidden(from)).map(([from, to]) => `${relative(ROOT, from)} → ${relative(ROOT, to)}`);
    expect(offending).toEqual([]);
  });
});
