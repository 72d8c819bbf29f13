// Preloaded into the measured CLI process (`node --import ./bench/probe.mjs bin/converge.js …`).
// Observes the process without changing it: HTTP requests (node:http's diagnostics channels, which
// the CLI's transport uses; undici's too, for anything on the global fetch), CPU and peak RSS at exit. Writes JSON to $CONVERGE_BENCH_PROBE.
// Worker threads inherit the preload: the CLI sends most requests from its HTTP worker
// (src/cloud/worker-http.ts), whose diagnostics channels are its own. A worker's probe sends its
// counts to the main thread's after each turn of its event loop in which a request started or
// ended (one small message, on a BroadcastChannel); the main thread's probe merges them at exit.
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { isMainThread, threadId } from "node:worker_threads";

const CHANNEL = "converge-bench-probe";
const out = process.env.CONVERGE_BENCH_PROBE;

/** HTTP spans by verb, as the probe of one thread sees them: { count, first start, last end (ms
 *  since the main thread's time origin), statuses } */
function httpSpans(onChange) {
  const verbs = {};
  const started = new WeakMap();
  const verbOf = (path) => {
    const m = /:(getIamPolicy|setIamPolicy)\b/.exec(path);
    return m ? m[1] : /\/federations\//.test(path) ? "getFederation" : "other";
  };
  const start = ({ request }) => {
    const verb = verbOf(String(request.path));
    const now = performance.timeOrigin + performance.now();
    started.set(request, verb);
    const v = (verbs[verb] ??= { count: 0, firstStartMs: now, lastEndMs: now, statuses: {} });
    v.count++;
    onChange();
  };
  const end = ({ request, response }) => {
    const verb = started.get(request);
    if (!verb) return;
    const v = verbs[verb];
    v.lastEndMs = performance.timeOrigin + performance.now();
    v.statuses[response.statusCode] = (v.statuses[response.statusCode] ?? 0) + 1;
    onChange();
  };
  subscribe("http.client.request.start", start);
  subscribe("http.client.response.finish", end);
  subscribe("undici:request:create", start);
  subscribe("undici:request:headers", end);
  return verbs;
}

/** The spans of every thread as one, in ms since the main thread's time origin. */
function merged(threads) {
  const all = {};
  for (const verbs of threads) {
    for (const [verb, v] of Object.entries(verbs)) {
      const m = (all[verb] ??= { count: 0, firstStartMs: Infinity, lastEndMs: -Infinity, statuses: {} });
      m.count += v.count;
      m.firstStartMs = Math.min(m.firstStartMs, v.firstStartMs - performance.timeOrigin);
      m.lastEndMs = Math.max(m.lastEndMs, v.lastEndMs - performance.timeOrigin);
      for (const [s, n] of Object.entries(v.statuses)) m.statuses[s] = (m.statuses[s] ?? 0) + n;
    }
  }
  return all;
}

function workerProbe() {
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  let queued = false;
  const send = () => {
    queued = false;
    channel.postMessage({ threadId, verbs });
  };
  const verbs = httpSpans(() => {
    if (queued) return;
    queued = true;
    setImmediate(send);
  });
}

function mainProbe() {
  const workers = new Map();
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  channel.onmessage = ({ data }) => workers.set(data.threadId, data.verbs);
  const verbs = httpSpans(() => {});
  process.on("exit", (code) => {
    const ru = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({
        exitCode: code,
        uptimeMs: performance.now(),
        timeOrigin: performance.timeOrigin,
        cpuUserMs: ru.userCPUTime / 1000,
        cpuSystemMs: ru.systemCPUTime / 1000,
        maxRssKB: ru.maxRSS,
        http: merged([verbs, ...workers.values()]),
      }),
    );
  });
}

if (out) {
  if (isMainThread) mainProbe();
  else workerProbe();
}
