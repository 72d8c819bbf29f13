// Preloaded into the measured CLI process (`node --import ./bench/probe.mjs bin/converge.js …`).
// Observes the process without changing it: HTTP requests (node:http's diagnostics channels, which
// the CLI's transport uses; undici's too, for anything on the global fetch), CPU and peak RSS at exit. Writes JSON to
// $CONVERGE_BENCH_PROBE.
// Worker threads inherit the preload: past its first 2,000 requests the CLI sends them from its
// HTTP worker (src/cloud/worker-http.ts), whose diagnostics channels are its own. A worker's probe
// keeps its counts in shared memory, which it hands to the main thread's probe once (on a
// BroadcastChannel) when it starts: no message per request, so the main thread is not disturbed.
// The main thread's probe merges them at exit.
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { isMainThread } from "node:worker_threads";

const CHANNEL = "converge-bench-probe";
const VERBS = ["getIamPolicy", "setIamPolicy", "getFederation", "other"];
/** Per verb: count, first start, last end (ms since the epoch, NaN: none yet), then a count per HTTP status 0–599. */
const STATUSES = 600;
const SLOTS = 3 + STATUSES;
const out = process.env.CONVERGE_BENCH_PROBE;

const verbIndex = (path) => {
  const m = /:(getIamPolicy|setIamPolicy)\b/.exec(path);
  return m ? (m[1] === "getIamPolicy" ? 0 : 1) : /\/federations\//.test(path) ? 2 : 3;
};

/** Counts HTTP requests of this thread into `cells` (a Float64Array of VERBS.length × SLOTS). */
function countInto(cells) {
  const started = new WeakMap();
  const now = () => performance.timeOrigin + performance.now();
  const start = ({ request }) => {
    const base = verbIndex(String(request.path)) * SLOTS;
    started.set(request, base);
    const t = now();
    cells[base]++;
    if (Number.isNaN(cells[base + 1])) cells[base + 1] = cells[base + 2] = t;
  };
  const end = ({ request, response }) => {
    const base = started.get(request);
    if (base === undefined) return;
    cells[base + 2] = now();
    const status = response.statusCode;
    if (status >= 0 && status < STATUSES) cells[base + 3 + status]++;
  };
  subscribe("http.client.request.start", start);
  subscribe("http.client.response.finish", end);
  subscribe("undici:request:create", start);
  subscribe("undici:request:headers", end);
}

function newCells(shared) {
  const cells = new Float64Array(
    shared ? new SharedArrayBuffer(VERBS.length * SLOTS * 8) : new ArrayBuffer(VERBS.length * SLOTS * 8),
  );
  for (let v = 0; v < VERBS.length; v++) cells[v * SLOTS + 1] = cells[v * SLOTS + 2] = NaN;
  return cells;
}

/** The spans of every thread as one, in ms since the main thread's time origin. */
function merged(all) {
  const verbs = {};
  VERBS.forEach((verb, v) => {
    const base = v * SLOTS;
    for (const cells of all) {
      if (!cells[base]) continue;
      const m = (verbs[verb] ??= { count: 0, firstStartMs: Infinity, lastEndMs: -Infinity, statuses: {} });
      m.count += cells[base];
      m.firstStartMs = Math.min(m.firstStartMs, cells[base + 1] - performance.timeOrigin);
      m.lastEndMs = Math.max(m.lastEndMs, cells[base + 2] - performance.timeOrigin);
      for (let s = 0; s < STATUSES; s++)
        if (cells[base + 3 + s]) m.statuses[s] = (m.statuses[s] ?? 0) + cells[base + 3 + s];
    }
  });
  return verbs;
}

function workerProbe() {
  const cells = newCells(true);
  countInto(cells);
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage(cells);
  channel.close();
}

function mainProbe() {
  const threads = [];
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  channel.onmessage = ({ data }) => threads.push(data);
  const cells = newCells(false);
  countInto(cells);
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
        http: merged([cells, ...threads]),
      }),
    );
  });
}

if (out) {
  if (isMainThread) mainProbe();
  else workerProbe();
}
