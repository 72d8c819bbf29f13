// The import graph of src/, read from the source text: what the layer test and the emulator's
// independence test check.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SRC = join(ROOT, "src");

/** Module specifiers of static imports, type imports, re-exports and dynamic imports in a TypeScript file. */
export function importSpecifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\bfrom\s+["']([^"']+)["']/g,
    /\bimport\s+["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out;
}

/** The .ts file a relative specifier designates (".js" in ESM specifiers is the .ts source). */
export function resolveLocal(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = resolve(dirname(from), spec);
  const forms = [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), `${base}.ts`, join(base, "index.ts")];
  for (const candidate of forms) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${relative(ROOT, from)} imports ${spec}, which resolves to no source file`);
}

/** The source files (.ts, .tsx) under `dir`, at any depth. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) for (const f of sourceFiles(path)) out.push(f);
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

/** The local files `file` imports (each once). */
export function importsOf(file: string): string[] {
  const targets = new Set<string>();
  for (const spec of importSpecifiers(readFileSync(file, "utf8"))) {
    const target = resolveLocal(file, spec);
    if (target) targets.add(target);
  }
  return [...targets];
}

/** Every import edge (importer → imported source file) reachable from `roots`. */
export function reachableEdges(roots: string[]): [string, string][] {
  const seen = new Set<string>(roots);
  const queue = [...roots];
  const edges: [string, string][] = [];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const target of importsOf(file)) {
      edges.push([file, target]);
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return edges;
}

/** The groups of two files or more that import each other in a loop (Tarjan's strongly connected components). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}
