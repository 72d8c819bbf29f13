// A program stack run in a worker thread, for the CLI (see ./program-mode.ts): the program's code
// (its import and its default export, the direct reads it makes) runs in ./program-worker.ts, and
// this thread gets back the stack document it declared and loads it, as a YAML stack's. While the
// program runs, this thread is free: a signal ends the command (src/cli/interrupt.ts) even if the
// program spins, and process.exit ends the worker with it.
import { resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { type LoadResult, withInputProblems } from "../config/load.js";
import type { GivenInputs } from "../config/inputs.js";
import { error } from "../diagnostics/diagnostic.js";
import { loadRun, type ProgramOptions, type ProgramRun } from "./program.js";
import { thrownBy } from "./program-guard.js";
import { programRanIsolated } from "./program-handles.js";
import type { DeferredAnswer, DeferredCall, ProgramWorkerData, ProgramWorkerResult } from "./program-worker.js";
import { forwardDeferred } from "./deferred.js";

/** What the worker needs of the options: the inputs' values (the program's Config reads them) and
 *  whether reads are refused. */
function workerOptions(opts: ProgramOptions): ProgramOptions {
  const inputs: GivenInputs | undefined = opts.inputs && {
    vars: opts.inputs.vars,
    files: opts.inputs.files,
    env: opts.inputs.env,
    problems: (opts.inputs.problems ?? []).filter((d) => d.severity === "error"),
  };
  return {
    ...(opts.state !== undefined ? { state: opts.state } : {}),
    ...(opts.callTimeoutMs !== undefined ? { callTimeoutMs: opts.callTimeoutMs } : {}),
    ...(opts.offline !== undefined ? { offline: opts.offline } : {}),
    ...(opts.backendType !== undefined ? { backendType: opts.backendType } : {}),
    ...(inputs ? { inputs } : {}),
  };
}

/** Runs the `.apply` functions a program's thread keeps (./deferred.ts): the thread does not keep
 *  the process running, except while a call waits for its answer. */
function callsTo(worker: Worker): (id: number, value: unknown) => Promise<unknown> {
  worker.unref();
  let seq = 0;
  const waiting = new Map<number, { done: (v: unknown) => void; fail: (e: Error) => void }>();
  worker.on("message", (a: DeferredAnswer) => {
    const w = waiting.get(a.seq);
    if (!w) return;
    waiting.delete(a.seq);
    if (!waiting.size) worker.unref();
    if ("failed" in a) w.fail(new Error(a.failed));
    else w.done(a.value);
  });
  worker.once("exit", () => {
    for (const w of waiting.values()) w.fail(new Error("the program's thread ended"));
    waiting.clear();
  });
  return (id, value) =>
    new Promise((done, fail) => {
      const call: DeferredCall = { seq: ++seq, id, value };
      waiting.set(call.seq, { done, fail });
      worker.ref();
      worker.postMessage(call);
    });
}

/** Runs the program `file` in a worker thread. */
function runInWorker(file: string, opts: ProgramOptions): Promise<ProgramRun> {
  const data: ProgramWorkerData = { file, opts: workerOptions(opts) };
  const worker = new Worker(new URL("./program-worker.js", import.meta.url), { workerData: data, stdout: true });
  // What the program prints goes to stderr: stdout holds only converge's output.
  worker.stdout.on("data", (chunk: Buffer) => process.stderr.write(chunk));
  return new Promise((done) => {
    let settled = false;
    const settle = (run: ProgramRun) => {
      if (settled) return;
      settled = true;
      done(run);
    };
    worker.once("message", (result: ProgramWorkerResult) => {
      programRanIsolated(result.left, () => worker.unref());
      if (result.deferred) forwardDeferred(callsTo(worker));
      settle(result.run);
    });
    worker.on("error", (e: unknown) => settle({ diagnostics: [thrownBy(file, e)] }));
    worker.once("exit", (code) => {
      const summary = `the program ended before it declared the stack (its thread exited with code ${code})`;
      settle({ diagnostics: [error(summary, { file })] });
    });
  });
}

/** Loads a program stack file, its code run in a worker thread. */
export async function loadProgramFileIsolated(path: string, opts: ProgramOptions = {}): Promise<LoadResult> {
  const file = resolve(path);
  return withInputProblems(loadRun(await runInWorker(file, opts), file, opts), opts.inputs);
}
