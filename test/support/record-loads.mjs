// `node --import ./record-loads.mjs`: appends every module the process loads (ESM URLs through a
// resolve hook, CommonJS paths through require's resolver) to the file named by
// CONVERGE_TEST_LOAD_LOG, one a line. For test/cli/lazy-startup.test.ts.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const log = process.env.CONVERGE_TEST_LOAD_LOG;
if (log) {
  register("./record-loads-hooks.mjs", import.meta.url);
  const Module = createRequire(import.meta.url)("node:module");
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (...args) {
    const file = resolveFilename.apply(this, args);
    appendFileSync(log, `${file}\n`);
    return file;
  };
}
