// `converge emulator start` as a child process: address printing, clean SIGTERM, bad seeds, and a
// SIGKILL in the middle of a write burst leaving a data file that loads. Needs `npm run build`.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { api, tempDir } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin/converge.js");

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await cleanup();
});

interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(args: string[], nodeFlags: string[] = []): Spawned {
  const child = spawn(process.execPath, [...nodeFlags, BIN, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for the two address lines; returns the URL. */
async function address(s: Spawned): Promise<{ url: string; hostPort: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)\nexport CLOUDNATIVE_EMULATOR_HOST=(\S+)\n/.exec(s.stdout());
    if (m) return { url: m[1]!, hostPort: m[2]! };
    if (s.child.exitCode !== null) throw new Error(`emulator exited: ${s.stderr()}`);
    if (Date.now() > deadline) throw new Error(`no address printed; stdout=${s.stdout()} stderr=${s.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const PLANS = Array.from({ length: 16 }, (_, i) => `projects/burst/locations/us-central1/restorePlans/p${i}`);

describe("converge emulator start", () => {
  it("handles a SIGTERM sent the moment its address is printed: exits 0, not killed by the signal", async () => {
    // A supervisor (or a test) may stop the emulator as soon as it reads the address. The preload
    // sends the SIGTERM from inside the write of that line: any later is a race.
    const preload = join(dir, "term-on-address.mjs");
    await writeFile(
      preload,
      `const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const r = write(chunk, ...rest);
  if (String(chunk).includes("listening on")) process.kill(process.pid, "SIGTERM");
  return r;
};
`,
    );
    const s = run(["emulator", "start", "--port", "0"], ["--import", preload]);
    const { code, signal } = await s.exited;
    expect({ code, signal, stderr: s.stderr() }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(s.stdout()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
  });

  it.each(["SIGTERM", "SIGHUP"] as const)(
    "prints its address, serves, and exits 0 on %s after flushing",
    async (sig) => {
      const seed = join(dir, "seed.yaml");
      await writeFile(
        seed,
        `projects:\n  p1:\n    number: 42\nrestorePlans:\n  - name: projects/p1/locations/l/restorePlans/r\n`,
      );
      const data = join(dir, "data.json");
      const s = run(["emulator", "start", "--port", "0", "--seed", seed, "--data", data]);
      const { url, hostPort } = await address(s);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(hostPort).toBe(url.slice("http://".length));
      const r = await api(url).getRestorePlan("projects/42/locations/l/restorePlans/r");
      expect(r.status).toBe(200);
      s.child.kill(sig);
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(JSON.parse(readFileSync(data, "utf8")).restorePlans[0].policy.etag).toBe(r.json.etag);
    },
  );

  it("exits 1 with a one-line error naming the file for a bad seed", async () => {
    const seed = join(dir, "bad-seed.yaml");
    await writeFile(
      seed,
      "restorePlans:\n  - name: projects/p/locations/l/restorePlans/r\n    policy:\n      bindings:\n " +
        "       - role: roles/x\n          members: [bob@example.com]\n",
    );
    const s = run(["emulator", "start", "--port", "0", "--seed", seed]);
    const { code } = await s.exited;
    expect(code).toBe(1);
    const err = s.stderr().trim();
    expect(err.split("\n")).toHaveLength(1);
    expect(err).toContain("bad-seed.yaml");
    expect(err).toContain("bob@example.com");
    expect(err).not.toMatch(/\n\s+at /);

    const yamlError = join(dir, "broken.yaml");
    await writeFile(yamlError, "restorePlans: [\n");
    const s2 = run(["emulator", "start", "--port", "0", "--seed", yamlError]);
    expect((await s2.exited).code).toBe(1);
    expect(s2.stderr()).toMatch(/broken\.yaml: invalid YAML/);

    const s3 = run(["emulator", "start", "--port", "0", "--seed", join(dir, "missing.yaml")]);
    expect((await s3.exited).code).toBe(1);
    expect(s3.stderr()).toMatch(/missing\.yaml: no such file/);
  });

  it(
    "a SIGKILL during a burst of concurrent writes leaves a data " + "file that loads with every acknowledged write",
    async () => {
      const seed = join(dir, "seed.yaml");
      await writeFile(seed, `restorePlans:\n${PLANS.map((n) => `  - name: ${n}\n`).join("")}`);
      const data = join(dir, "data.json");
      // Killed once some writes were acknowledged (a count, not a time: the machine's speed decides nothing).
      for (const killAfterAcks of [1, 25]) {
        const s = run(["emulator", "start", "--port", "0", "--seed", seed, "--data", data]);
        const { url } = await address(s);
        const c = api(url);
        const acked = new Map<string, number>();
        let acks = 0;
        let enough!: () => void;
        const enoughAcked = new Promise<void>((r) => (enough = r));
        let stop = false;
        const workers = PLANS.map(async (name, w) => {
          for (let i = 0; !stop; i++) {
            try {
              const r = await c.setRestorePlan(name, {
                policy: { bindings: [{ role: "roles/x.y", members: [`user:w${w}-${i}@example.com`] }] },
              });
              if (r.status === 200) {
                acked.set(name, i);
                if (++acks >= killAfterAcks) enough();
              }
            } catch {
              return; // connection died with the process
            }
          }
        });
        await enoughAcked;
        s.child.kill("SIGKILL");
        stop = true;
        await Promise.all(workers);
        expect((await s.exited).signal).toBe("SIGKILL");
        expect(acked.size).toBeGreaterThan(0);

        expect(existsSync(data)).toBe(true);
        const again = await startEmulator({ dataFile: data });
        try {
          const c2 = api(again.url);
          for (const [w, name] of PLANS.entries()) {
            const r = await c2.getRestorePlan(name);
            expect(r.status).toBe(200);
            const ack = acked.get(name);
            if (ack === undefined) continue;
            const member: string = r.json.bindings[0].members[0];
            const m = new RegExp(`^user:w${w}-(\\d+)@example\\.com$`).exec(member);
            expect(m, member).not.toBeNull();
            // Durability: what was acknowledged survived (a later, unacknowledged write may too).
            expect(Number(m![1])).toBeGreaterThanOrEqual(ack);
          }
        } finally {
          await again.close();
        }
      }
    },
  );
});
