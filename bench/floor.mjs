// Calibration: the fastest a client on this machine gets through P getIamPolicy calls at the
// given parallelism against the emulator: a bare fetch loop in a fresh Node process (so it pays
// the same cold start as the CLI's HTTP stack), nothing else to do.
// Usage: node bench/floor.mjs HOST:PORT PROJECT LOCATION COUNT PARALLELISM → prints {"spanMs":…}
const [hostPort, project, location, count, parallelism] = process.argv.slice(2);
const n = Number(count);
const half = Math.ceil(n / 2);
// Like the CLI: restore plans GET (v1), endpoints POST (v1beta1), half and half.
const call = (i) =>
  i < half
    ? fetch(`http://${hostPort}/v1/projects/${project}/locations/${location}/restorePlans/rp-${String(i).padStart(5, "0")}:getIamPolicy?options.requestedPolicyVersion=3`, { headers: { Accept: "application/json" } })
    : fetch(`http://${hostPort}/v1beta1/projects/${project}/locations/${location}/endpoints/ep-${String(i - half).padStart(5, "0")}:getIamPolicy?options.requestedPolicyVersion=3`, { method: "POST", headers: { Accept: "application/json", "Content-Type": "application/json" } });
let next = 0;
let failed = 0;
const t0 = performance.now();
const worker = async () => {
  while (next < n) {
    const i = next++;
    const res = await call(i);
    await res.text();
    if (!res.ok) failed++;
  }
};
await Promise.all(Array.from({ length: Number(parallelism) }, worker));
process.stdout.write(JSON.stringify({ spanMs: performance.now() - t0, failed }) + "\n");
