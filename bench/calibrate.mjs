// A fixed single-thread workload whose time tells how fast this machine is today (the 2 cores
// are shared, and the host under them changes): `npm run bench` runs it before and after its
// runs and prints the medians beside the machine, so that two runs' figures can be compared.
// Prints the milliseconds the workload took. Not part of converge: nothing here is measured.
const started = performance.now();
const items = [];
for (let i = 0; i < 50_000; i++)
  items.push({
    address: `rp${String(i).padStart(6, "0")}_b${i % 10}`,
    role: `roles/bench.role${i % 10}`,
    members: [`group:team${i % 7}@example.com`, `user:u${i}@example.com`],
  });
const text = JSON.stringify(items, null, 2);
const back = JSON.parse(text);
const keys = back.map((x) => `${x.role} ${x.members[1]}`).sort();
const index = new Map();
for (const k of keys) index.set(k, (index.get(k) ?? 0) + 1);
if (index.size !== 50_000) throw new Error("calibration: unexpected result");
process.stdout.write(`${Math.round(performance.now() - started)}\n`);
