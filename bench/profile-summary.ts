// `tsx bench/profile-summary.ts FILE.cpuprofile [TOP]`: the functions with the most self time and
// the most total (inclusive) time in a V8 CPU profile (from `npm run bench -- --cpu-prof DIR`).
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function summarize(profile: Profile, top = 30): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n: ProfileNode) =>
    `${n.callFrame.functionName || "(anonymous)"} ` +
    `${n.callFrame.url.replace(new RegExp(String.raw`^.*\/(node_modules|dist|src)\/`), "$1/")}:` +
    `${n.callFrame.lineNumber + 1}`;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    all += dt;
    const k = key(byId.get(id)!);
    self.set(k, (self.get(k) ?? 0) + dt);
    const seen = new Set<string>();
    for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) {
      const ck = key(byId.get(c)!);
      if (seen.has(ck)) continue;
      seen.add(ck);
      total.set(ck, (total.get(ck) ?? 0) + dt);
    }
  });
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)
      .join("\n");
  return `sampled ${(all / 1000).toFixed(0)} ms\n--- self ---\n${list(self)}\n--- total ---\n${list(total)}\n`;
}

const [file, top] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: tsx bench/profile-summary.ts FILE.cpuprofile [TOP]\n");
  process.exit(2);
}
process.stdout.write(summarize(JSON.parse(readFileSync(file, "utf8")) as Profile, top ? Number(top) : 30));
