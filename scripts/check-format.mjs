// The code's format: Prettier (.prettierrc.json, .prettierignore) over the TypeScript and JavaScript
// of src/, test/, bench/, scripts/, bin/ and the root's config files, and no line over 120
// characters (Prettier breaks code, not strings or comments: those are folded by hand).
//   node scripts/check-format.mjs          lists what is not formatted (exit 1 if anything)
//   node scripts/check-format.mjs --write  formats the files in place (npm run format)
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIRS = ["src", "test", "bench", "scripts", "bin"];
const CODE = /\.(ts|tsx|js|mjs)$/;
const SKIP = new Set(["node_modules", "dist", "results"]);
export const MAX_LINE = 120;

function walk(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name) || e.name.startsWith(".")) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(path, out);
    else if (e.isFile() && CODE.test(e.name)) out.push(path);
  }
}

/** The files the format covers (those .prettierignore leaves out aside). */
export async function formattedFiles(root = ROOT) {
  const all = [];
  for (const d of DIRS) walk(join(root, d), all);
  for (const e of readdirSync(root, { withFileTypes: true }))
    if (e.isFile() && CODE.test(e.name)) all.push(join(root, e.name));
  const ignorePath = join(root, ".prettierignore");
  const kept = [];
  for (const f of all.sort()) if (!(await prettier.getFileInfo(f, { ignorePath })).ignored) kept.push(f);
  return kept;
}

/** "file: not formatted" and "file:line: N characters" for every file out of format. */
export async function formatProblems(root = ROOT) {
  const problems = [];
  for (const file of await formattedFiles(root)) {
    const text = readFileSync(file, "utf8");
    const options = { ...(await prettier.resolveConfig(file)), filepath: file };
    const name = relative(root, file);
    if (!(await prettier.check(text, options))) problems.push(`${name}: not formatted (npm run format)`);
    text.split("\n").forEach((line, i) => {
      const width = [...line].length;
      if (width > MAX_LINE) problems.push(`${name}:${i + 1}: ${width} characters (at most ${MAX_LINE})`);
    });
  }
  return problems;
}

async function writeAll() {
  for (const file of await formattedFiles()) {
    const text = readFileSync(file, "utf8");
    const out = await prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file });
    if (out !== text) writeFileSync(file, out);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes("--write")) await writeAll();
  const problems = await formatProblems();
  for (const p of problems) console.log(p);
  process.exitCode = problems.length ? 1 : 0;
}
