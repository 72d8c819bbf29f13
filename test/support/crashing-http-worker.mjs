// A stand-in for the HTTP worker that says it is ready, then dies on the first message it gets
// (test/cloud/worker-http.test.ts: what waited for it must fail, later requests go direct).
import { parentPort } from "node:worker_threads";

parentPort.on("message", () => {
  throw new Error("the stand-in worker died");
});
parentPort.postMessage("ready");
