#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via prepare)
// and bundled into dist/bundle/ (scripts/bundle-cli.mjs: far fewer modules to load at start-up).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/bundle/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("converge: dist/ is missing; run `npm run build` (or `npm ci`) in the checkout first.\n");
  process.exit(1);
}
// `converge --version` alone is answered before the CLI (commander, the commands) loads, with
// commander's output for it: the text and a newline, exit 0.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { versionText } = await import("../dist/base/version.js");
  process.stdout.write(`${versionText()}\n`);
} else {
  await import(entry.href);
}
