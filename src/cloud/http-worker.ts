// The HTTP worker: a thread that sends the requests ./worker-http.ts passes it with ./http.ts's
// node:http client and passes back each whole response (or error). The calling thread keeps
// everything else: retries, pacing, deadlines, tokens.
import { parentPort, workerData } from "node:worker_threads";
import { createRawNodeHttp } from "./http.js";
import { type WireAnswer, type WireOut, type WireRequest, WORKER_READY, errorToWire } from "./http-wire.js";

/** What the calling thread gives the worker when it starts it. */
export interface HttpWorkerData {
  env: NodeJS.ProcessEnv;
  maxIdleMs?: number;
}

function serve(port: NonNullable<typeof parentPort>, data: HttpWorkerData): void {
  const send = createRawNodeHttp(data.env, data.maxIdleMs !== undefined ? { maxIdleMs: data.maxIdleMs } : {});
  const inFlight = new Map<number, AbortController>();
  // Answers that arrive together leave together: one message per turn of the event loop.
  let outbox: WireAnswer[] = [];
  const flush = () => {
    const batch = outbox;
    outbox = [];
    port.postMessage(batch);
  };
  const answer = (a: WireAnswer) => {
    if (outbox.push(a) === 1) setImmediate(flush);
  };
  const start = (r: WireRequest) => {
    const controller = new AbortController();
    inFlight.set(r.id, controller);
    send(r.url, {
      method: r.method,
      headers: r.headers,
      ...(r.body !== undefined ? { body: r.body } : {}),
      signal: controller.signal,
    }).then(
      (response) => {
        inFlight.delete(r.id);
        answer({ id: r.id, response });
      },
      (e: unknown) => {
        inFlight.delete(r.id);
        answer({ id: r.id, error: errorToWire(e) });
      },
    );
  };
  port.on("message", (batch: WireOut[]) => {
    for (const m of batch) {
      if ("cancel" in m) inFlight.get(m.id)?.abort();
      else start(m);
    }
  });
  port.postMessage(WORKER_READY);
}

if (parentPort) serve(parentPort, workerData as HttpWorkerData);
