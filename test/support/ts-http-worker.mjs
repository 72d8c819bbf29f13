// The HTTP worker (src/cloud/http-worker.ts) started from its TypeScript source, for tests that
// run the sources: pass this file as createWorkerHttp's `workerUrl`.
import { register } from "tsx/esm/api";

register();
await import("../../src/cloud/http-worker.ts");
