// HTTP from a worker thread (issue 20). On this 2-core machine each request costs the calling
// thread about 0.3–0.4 ms of node:http work (the socket writes, the parser, the agent), which is
// much of a no-op plan's time at 10,000 policies: the planner waits behind it. Here the requests
// are sent by a worker thread (./http-worker.ts, with the same node:http client, ./http.ts) while
// the calling thread plans: it only posts each request and receives each whole response, in
// batches, for about a fifth of the cost (1,000 reads: 300–400 ms of the calling thread's time
// direct, 50–90 ms through the worker).
//
// A worker costs memory and start-up, and competes for the same 2 cores with the GC's threads, so
// the first requests are sent directly and the worker is started only once a run has made
// `directFirst` requests (DIRECT_FIRST), or at once when the caller says the run will make at
// least that many (`expect`: the planner knows its reads before it sends them); until it is
// ready, requests go on being sent directly. Small runs never start it. Where the worker's
// module is not there (the sources run by a TypeScript loader) every request is sent directly.
// Both ways behave alike: the same client sends the request, errors keep their class, name,
// message, code and causes, and an aborted signal rejects at once with an AbortError.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { abortError, createNodeHttp, type HttpFn, type HttpRequest, type HttpResponse, responseOf } from "./http.js";
import { type WireAnswer, type WireOut, WORKER_READY, errorFromWire } from "./http-wire.js";
import type { HttpWorkerData } from "./http-worker.js";

/** Requests sent directly before the worker is started. Measured on this 2-core machine against
 *  the emulator (paired runs): with the worker from the 65th request, a no-op plan of 1,200
 *  policies took 1.05x as long (and 20 MB more memory), one of 12,000 policies 0.89x; by those
 *  two points, the worker pays for itself from about 2,300 requests on. */
const DIRECT_FIRST = 2_000;

export interface WorkerHttpOptions {
  /** Names proxies (see ./proxy.ts); default process.env. */
  env?: NodeJS.ProcessEnv;
  maxIdleMs?: number;
  /** Requests sent directly before the worker is started; default DIRECT_FIRST. 0: it is
   *  started at once (requests made before it is ready are still sent directly). */
  directFirst?: number;
  /** The worker's module; default http-worker.js beside this module. */
  workerUrl?: URL;
}

/** An HttpFn whose requests go through a worker thread once a run has made enough of them. */
export interface WorkerHttp extends HttpFn {
  /** Whether the worker took requests: resolves once it is ready (true) or could not start (false). */
  ready(): Promise<boolean>;
  /** The run will make at least `requests` requests in all: enough (`directFirst` or more)
   *  starts the worker now rather than after the first `directFirst` have been sent directly. */
  expect(requests: number): void;
  /** Requests sent directly and through the worker so far. */
  counts(): { direct: number; worker: number };
  /** Stops the worker; requests after this are sent directly. */
  close(): Promise<void>;
}

interface Waiting {
  resolve: (r: HttpResponse) => void;
  reject: (e: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

type LinkState = "off" | "starting" | "ready" | "stopped";

/** The calling thread's end of the worker: what it sent, what it waits for. */
class WorkerLink {
  state: LinkState = "off";
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private outbox: WireOut[] = [];
  private nextId = 1;
  private readonly settled: Promise<boolean>;
  private settle!: (ok: boolean) => void;

  constructor(
    private readonly url: URL,
    private readonly data: HttpWorkerData,
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  ready(): Promise<boolean> {
    return this.state === "off" ? Promise.resolve(false) : this.settled;
  }

  start(): void {
    if (this.state !== "off") return;
    this.state = "starting";
    let worker: Worker;
    try {
      worker = new Worker(this.url, { workerData: this.data });
    } catch {
      this.stop();
      return;
    }
    this.worker = worker;
    worker.on("message", (m: typeof WORKER_READY | WireAnswer[]) =>
      m === WORKER_READY ? this.onReady() : this.onAnswers(m),
    );
    worker.on("error", (e) => this.stop(e));
    worker.on("exit", (code) => this.stop(new Error(`the HTTP worker exited (code ${code})`)));
  }

  send(url: string, init: HttpRequest): Promise<HttpResponse> {
    const { signal } = init;
    if (signal.aborted) return Promise.reject(abortError(signal.reason));
    const id = this.nextId++;
    return new Promise<HttpResponse>((resolve, reject) => {
      const onAbort = () => {
        this.forget(id);
        this.post({ id, cancel: true });
        reject(abortError(signal.reason));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.waiting.size === 0) this.worker!.ref();
      this.waiting.set(id, { resolve, reject, signal, onAbort });
      this.post({
        id,
        url,
        method: init.method,
        headers: init.headers,
        ...(init.body !== undefined ? { body: init.body } : {}),
      });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.stop(new Error("the HTTP worker was closed"));
    if (worker) await worker.terminate();
  }

  private onReady(): void {
    if (this.state !== "starting") return;
    this.state = "ready";
    // Starting, it kept the process alive (what waits for it is answered); ready and idle, it
    // does not: one with requests in flight does (see send).
    this.worker!.unref();
    this.settle(true);
  }

  private onAnswers(batch: WireAnswer[]): void {
    for (const a of batch) {
      const w = this.forget(a.id);
      if (!w) continue;
      if ("response" in a) w.resolve(responseOf(a.response));
      else w.reject(errorFromWire(a.error));
    }
  }

  /** The worker is gone: what waits for it fails (whether a request was sent is not known), and
   *  every later request is sent directly. */
  private stop(why?: Error): void {
    if (this.state === "stopped") return;
    this.state = "stopped";
    this.settle(false);
    for (const [id, w] of this.waiting) {
      this.forget(id);
      w.reject(
        Object.assign(new Error(`the HTTP worker stopped before answering: ${why?.message ?? "unknown"}`), {
          cause: why,
        }),
      );
    }
  }

  private forget(id: number): Waiting | undefined {
    const w = this.waiting.get(id);
    if (!w) return undefined;
    this.waiting.delete(id);
    w.signal.removeEventListener("abort", w.onAbort);
    if (this.waiting.size === 0) this.worker?.unref();
    return w;
  }

  /** Requests made in one turn of the event loop leave together, in one message at its end: each
   *  message costs a structured clone and a wake-up of the worker. */
  private post(m: WireOut): void {
    if (this.outbox.push(m) > 1) return;
    setImmediate(() => {
      const batch = this.outbox;
      this.outbox = [];
      if (this.state === "ready") this.worker!.postMessage(batch);
    });
  }
}

/** The worker's module beside this one, if it is there. */
function defaultWorkerUrl(): URL | undefined {
  const url = new URL("./http-worker.js", import.meta.url);
  return url.protocol === "file:" && existsSync(fileURLToPath(url)) ? url : undefined;
}

export function createWorkerHttp(opts: WorkerHttpOptions = {}): WorkerHttp {
  const env = opts.env ?? process.env;
  const maxIdle = opts.maxIdleMs !== undefined ? { maxIdleMs: opts.maxIdleMs } : {};
  const direct = createNodeHttp(env, maxIdle);
  const directFirst = opts.directFirst ?? DIRECT_FIRST;
  const url = opts.workerUrl ?? defaultWorkerUrl();
  const link = url ? new WorkerLink(url, { env: { ...env }, ...maxIdle }) : undefined;
  // directFirst 0: started now, so that every request can go through it once it is ready.
  if (link && directFirst === 0) link.start();
  let sentDirect = 0;
  let sentWorker = 0;
  const fn = ((target: string, init: HttpRequest) => {
    if (link?.state === "ready") {
      sentWorker++;
      return link.send(target, init);
    }
    if (link && sentDirect >= directFirst) link.start();
    sentDirect++;
    return direct(target, init);
  }) as WorkerHttp;
  fn.expect = (requests) => {
    if (link && requests >= directFirst) link.start();
  };
  fn.ready = () => link?.ready() ?? Promise.resolve(false);
  fn.counts = () => ({ direct: sentDirect, worker: sentWorker });
  fn.close = () => link?.close() ?? Promise.resolve();
  return fn;
}
