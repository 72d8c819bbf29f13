// Preloaded into the measured CLI process (`node --import ./bench/probe.mjs bin/converge.js …`).
// Observes the process without changing it: HTTP requests (node:http's diagnostics channels, which
// the CLI's transport uses; undici's too, for anything on the global fetch), CPU and peak RSS at exit. Writes JSON to $CONVERGE_BENCH_PROBE.
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const out = process.env.CONVERGE_BENCH_PROBE;
if (out) {
  /** verb -> { count, first start, last end } (ms since process start) */
  const verbs = {};
  const started = new WeakMap();
  const verbOf = (path) => {
    const m = /:(getIamPolicy|setIamPolicy)\b/.exec(path);
    return m ? m[1] : /\/federations\//.test(path) ? "getFederation" : "other";
  };
  const start = ({ request }) => {
    const verb = verbOf(String(request.path));
    const now = performance.now();
    started.set(request, verb);
    const v = (verbs[verb] ??= { count: 0, firstStartMs: now, lastEndMs: now, statuses: {} });
    v.count++;
  };
  const end = ({ request, response }) => {
    const verb = started.get(request);
    if (!verb) return;
    const v = verbs[verb];
    v.lastEndMs = performance.now();
    v.statuses[response.statusCode] = (v.statuses[response.statusCode] ?? 0) + 1;
  };
  subscribe("http.client.request.start", start);
  subscribe("http.client.response.finish", end);
  subscribe("undici:request:create", start);
  subscribe("undici:request:headers", end);
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
        http: verbs,
      }),
    );
  });
}
