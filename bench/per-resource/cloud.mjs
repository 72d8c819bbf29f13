// dist/connect/cloud.js with openCloud's port made per-resource (./port.mjs). The state file
// ($CONVERGE_BENCH_STATE) says how many resources each policy holds: the refresh reads it once per
// resource, as a provider with one read per resource would.
import { existsSync, readFileSync } from "node:fs";
import { openCloud as openRealCloud } from "../../dist/connect/cloud.js";
import { perResourcePort } from "./port.mjs";

export * from "../../dist/connect/cloud.js";

/** Resources in the state per policy name. */
function stateResourcesPerPolicy(file) {
  const counts = new Map();
  if (!file || !existsSync(file)) return counts;
  for (const r of JSON.parse(readFileSync(file, "utf8")).resources ?? []) {
    const name = String(r.inputs?.name ?? "");
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

export async function openCloud(provider, opts) {
  const cloud = await openRealCloud(provider, opts);
  return { ...cloud, port: perResourcePort(cloud.port, stateResourcesPerPolicy(process.env.CONVERGE_BENCH_STATE)) };
}
