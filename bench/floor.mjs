// Calibration: the fastest a client on this machine gets through P getIamPolicy calls at the
// given parallelism against the emulator: a bare loop on the CLI's HTTP stack (node:http with a
// keep-alive agent) in a fresh Node process (so it pays the same cold start), nothing else to do.
// Usage: node bench/floor.mjs HOST:PORT PROJECT LOCATION COUNT PARALLELISM → prints {"spanMs":…}
import http from "node:http";

const [hostPort, project, location, count, parallelism] = process.argv.slice(2);
const n = Number(count);
const half = Math.ceil(n / 2);
const agent = new http.Agent({ keepAlive: true });
const request = (method, path) =>
  new Promise((resolve, reject) => {
    const req = http.request(
      `http://${hostPort}${path}`,
      {
        method,
        agent,
        headers: {
          Accept: "application/json",
          ...(method === "POST" ? { "Content-Type": "application/json", "Content-Length": 0 } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
// Like the CLI: restore plans GET (v1), endpoints POST (v1beta1), half and half.
const call = (i) =>
  i < half
    ? request(
        "GET",
        `/v1/projects/${project}/locations/${location}/restorePlans/rp-` +
          `${String(i).padStart(5, "0")}:getIamPolicy?options.requestedPolicyVersion=3`,
      )
    : request(
        "POST",
        `/v1beta1/projects/${project}/locations/${location}/endpoints/ep-` +
          `${String(i - half).padStart(5, "0")}:getIamPolicy?options.requestedPolicyVersion=3`,
      );
let next = 0;
let failed = 0;
const t0 = performance.now();
const worker = async () => {
  while (next < n) {
    const i = next++;
    const status = await call(i);
    if (status < 200 || status >= 300) failed++;
  }
};
await Promise.all(Array.from({ length: Number(parallelism) }, worker));
process.stdout.write(JSON.stringify({ spanMs: performance.now() - t0, failed }) + "\n");
process.exit(0);
