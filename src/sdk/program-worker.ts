// The worker thread a program stack runs in for the CLI (./program-isolated.ts starts it): it
// imports the program, runs its default export and posts back the stack document it declared
// (plain data), with what it left open. A promise the program rejects and leaves unhandled (at
// load, in its export, or a tick after the export returned) is the program's failure.
import { parentPort, workerData } from "node:worker_threads";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { diagnosticLines } from "../diagnostics/diagnostic-lines.js";
import { toPlain } from "../diagnostics/lines.js";
import { runProgramFile, type ProgramOptions, type ProgramRun } from "./program.js";
import { thrownBy } from "./program-guard.js";
import { openProgramHandles } from "./program-handles.js";
import { deferredCount, runDeferred } from "./deferred.js";

export interface ProgramWorkerData {
  file: string;
  opts: ProgramOptions;
}

/** What the worker posts once the program has run. */
export interface ProgramWorkerResult {
  run: ProgramRun;
  /** The handles it left open, e.g. "1 server" (undefined: none). */
  left: string | undefined;
  /** How many `.apply` functions it keeps for apply: the thread then stays to run them. */
  deferred: number;
}

/** A call of a kept `.apply` function, from the main thread, and its answer. */
export interface DeferredCall {
  seq: number;
  id: number;
  value: unknown;
}
export type DeferredAnswer = { seq: number; value: unknown } | { seq: number; failed: string };

const { file, opts } = workerData as ProgramWorkerData;
const rejected: Diagnostic[] = [];
let posted = false;
process.on("unhandledRejection", (e: unknown) => {
  const d = thrownBy(file, e);
  if (!posted) rejected.push(d);
  else {
    // The stack was declared already: said, not a failure of the command (which may be applying).
    const late = { ...d, severity: "warning" as const, summary: `${d.summary} (after the program finished: ignored)` };
    process.stderr.write(toPlain(diagnosticLines([late])));
  }
});

const run = await runProgramFile(file, opts);
// A rejection a tick after the export returned is reported once the ticks after it have run.
for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
posted = true;
const result: ProgramWorkerResult = {
  run: rejected.length ? { diagnostics: run.diagnostics.concat(rejected) } : run,
  left: openProgramHandles(),
  deferred: run.document ? deferredCount() : 0,
};
parentPort!.postMessage(result);
// The functions kept for apply run here, on the values apply sends, as long as the command lasts.
if (result.deferred) {
  parentPort!.on("message", (call: DeferredCall) => {
    const answer = (a: DeferredAnswer) => parentPort!.postMessage(a);
    runDeferred(call.id, call.value).then(
      (value) => answer({ seq: call.seq, value }),
      (e: unknown) => answer({ seq: call.seq, failed: e instanceof Error ? e.message : String(e) }),
    );
  });
}
