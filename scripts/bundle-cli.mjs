#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bundle/ with esbuild: start-up
// time is dominated by resolving and loading ~200 small ES modules, and one file per lazily loaded
// part costs far less (issue 20). tsc stays the compiler; esbuild only joins its output. Every
// dynamic import() stays a split point, so what a command loads is still what it uses; packages
// stay external (resolved from node_modules as before), but for a few small ones (JOINED). The
// bundle sits two levels under the package root, like dist/cli/main.js, so paths a module finds
// from its own URL (../../schemas/, ../schemas/precompiled.cjs) hold in both.
// bin/converge.js runs dist/bundle/main.js; dist/cli/main.js remains the unbundled CLI (the
// package's SDK entry, dist/index.js, is not bundled).
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const OUT = join(ROOT, "dist", "bundle");

// Small ES-module packages joined into the chunks that use them, where each would otherwise be its
// own files to resolve and load on every run: diff's 19 modules (every plan loads the attribute
// diff) shrink to the one function it uses; fastest-levenshtein's ES build replaces its CommonJS
// file, which Node read twice. Every other package stays external, resolved from node_modules.
const JOINED = new Set(["diff", "p-limit", "is-in-ci", "fastest-levenshtein"]);
const { dependencies } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const external = Object.keys(dependencies)
  .filter((name) => !JOINED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

rmSync(OUT, { recursive: true, force: true });
const { metafile } = await build({
  // The workers: HTTP (dist/cloud/worker-http.js starts ./http-worker.js beside the module that
  // holds it: in the bundle, beside the chunks) and program stacks' (dist/sdk/program-isolated.js
  // starts ./program-worker.js, the same way).
  entryPoints: {
    main: join(ROOT, "dist", "cli", "main.js"),
    "http-worker": join(ROOT, "dist", "cloud", "http-worker.js"),
    "program-worker": join(ROOT, "dist", "sdk", "program-worker.js"),
  },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  absWorkingDir: ROOT,
  external,
  // A joined package's ES build where it has one (fastest-levenshtein's "module").
  mainFields: ["module", "main"],
  // No keepNames: its wrappers cost per closure created on hot paths, and nothing reads a
  // function's name (error classes set theirs explicitly).
  chunkNames: "chunk-[hash]",
  logLevel: "warning",
  // Which modules each output file holds: what a run loads can be told module by module
  // (test/cli/lazy-startup.test.ts).
  metafile: true,
});
writeFileSync(join(OUT, "metafile.json"), JSON.stringify(metafile));

// The packages whose code the bundle holds (JOINED and what they import, however deep in
// node_modules), with their licence texts: their notices travel with their code. The metafile's
// paths are relative to absWorkingDir (ROOT).
const joined = new Set();
for (const input of Object.keys(metafile.inputs)) {
  const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (m) joined.add(m[1]);
}
const notices = [...joined].sort().map((path) => {
  const dir = join(ROOT, path);
  const { name, version, license } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e(\.(md|txt))?$/i.test(f));
  if (!file) throw new Error(`${name}: no licence file to copy beside the bundle`);
  return `${name} ${version} (${license})\n\n${readFileSync(join(dir, file), "utf8").trim()}\n`;
});
writeFileSync(join(OUT, "THIRD-PARTY-LICENSES.txt"), notices.join("\n" + "-".repeat(72) + "\n\n"));
