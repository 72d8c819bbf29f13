#!/usr/bin/env node
// The size limits of the code (docs/ARCHITECTURE.md): no function in src/ longer than 80 lines,
// no file longer than 400 (generated code aside). Prints every violation; exits 1 when there is
// one. Functions are found with TypeScript's own parser: declarations, methods, arrows and
// function expressions, each measured from its first to its last line.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const MAX_FUNCTION = 80;
const MAX_FILE = 400;

export function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "generated" ? [] : sources(p);
    return /\.tsx?$/.test(name) ? [p] : [];
  });
}

function functionName(node, sf) {
  if (node.name) return node.name.getText(sf);
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  )
    return parent.name.getText(sf);
  return "(anonymous)";
}

/** Calls `fn(node, sf, rel)` for every node of every file, parsed by TypeScript's own parser. */
export function forEachNode(files, fn) {
  for (const file of files) {
    const sf = ts.createSourceFile(
      file,
      readFileSync(file, "utf8"),
      ts.ScriptTarget.Latest,
      true,
      file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
    const rel = relative(ROOT, file);
    const visit = (node) => {
      fn(node, sf, rel);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}

/** Prints the violations and a last line (`ok` when there is none); exit status 1 when there is one. */
export function report(found, ok, counted) {
  for (const v of found) process.stdout.write(v + "\n");
  process.stdout.write(found.length ? `${found.length} ${counted}\n` : `${ok}\n`);
  process.exitCode = found.length ? 1 : 0;
}

export function violations(files = sources(join(ROOT, "src"))) {
  const out = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines > MAX_FILE) out.push(`${relative(ROOT, file)}: ${lines} lines (at most ${MAX_FILE})`);
  }
  forEachNode(files, (node, sf, rel) => {
    if (!ts.isFunctionLike(node) || !node.body) return;
    const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
    const end = sf.getLineAndCharacterOfPosition(node.end).line;
    const n = end - start + 1;
    if (n > MAX_FUNCTION)
      out.push(`${rel}:${start + 1}: function ${functionName(node, sf)} is ${n} lines (at most ${MAX_FUNCTION})`);
  });
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  report(violations(), "size limits: ok", "size limit violation(s)");
