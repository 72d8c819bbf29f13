// `node --import ./record-loads.mjs`: appends every module the process loads (ESM URLs through a
// resolve hook, CommonJS files as require loads them) to the file named by
// CONVERGE_TEST_LOAD_LOG, one a line. For test/cli/lazy-startup.test.ts.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const log = process.env.CONVERGE_TEST_LOAD_LOG;
if (log) {
  register("./record-loads-hooks.mjs", import.meta.url);
  const Module = createRequire(import.meta.url)("node:module");
  // Module.prototype.load runs once per CommonJS file actually loaded (a require.resolve, which
  // only finds a path, is not a load).
  const load = Module.prototype.load;
  Module.prototype.load = function (filename, ...rest) {
    appendFileSync(log, `${filename}\n`);
    return load.call(this, filename, ...rest);
  };
}
