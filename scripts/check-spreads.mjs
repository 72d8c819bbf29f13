#!/usr/bin/env node
// No call in src/ spreads an array into its arguments (`into.push(...items)`, `Math.max(...xs)`):
// each item becomes an argument on the stack, and past about 120,000 of them V8 throws RangeError.
// A destroy plan of 100,000 resources crashed so. src/base/arrays.ts has pushAll and maxOf instead.
// Forwarding a function's own rest parameter (`(...args) => fn(...args)`) is allowed: it holds
// what one call was given. Prints every violation; exits 1 when there is one.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { forEachNode, report, sources } from "./check-sizes.mjs";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");

/** The expression without parentheses and `as` casts around it. */
function bare(e) {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) e = e.expression;
  return e;
}

/** Whether `id` names a rest parameter of a function it is inside. */
function isRestParameter(id) {
  for (let n = id.parent; n; n = n.parent) {
    if (!ts.isFunctionLike(n)) continue;
    const p = n.parameters.find((q) => ts.isIdentifier(q.name) && q.name.text === id.text);
    if (p) return p.dotDotDotToken !== undefined;
  }
  return false;
}

export function spreadCalls(files = sources(join(ROOT, "src"))) {
  const out = [];
  forEachNode(files, (node, sf, rel) => {
    if (!ts.isSpreadElement(node) || !(ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent))) return;
    const e = bare(node.expression);
    if (ts.isIdentifier(e) && isRestParameter(e)) return;
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    out.push(`${rel}:${line}: ${node.getText(sf)} spreads into a call (use pushAll or maxOf from src/base/arrays.ts)`);
  });
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  report(spreadCalls(), "spread calls: none", "spread call(s)");
