// Preloaded into a CLI run by test/e2e/http-worker.e2e.test.ts (`node --import` this file): worker
// threads inherit the option, so each thread the CLI starts appends its id to the file named by
// CONVERGE_TEST_THREAD_MARKER. The main thread writes nothing.
import { appendFileSync } from "node:fs";
import { isMainThread, threadId } from "node:worker_threads";

const file = process.env.CONVERGE_TEST_THREAD_MARKER;
if (file && !isMainThread) appendFileSync(file, `${threadId}\n`);
