// Crash safety and cross-process locking, against the real code: the children import the
// compiled module (dist/state/index.js, built by `npm run build`, which `npm test` runs first).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { validate } from "../../src/schemas/index.js";
import { localStateStore, parseState, type State } from "../../src/state/index.js";
import { deadPid, mode, overwrite, tempDir, waitForLine } from "./helpers.js";

const DIST = fileURLToPath(new URL("../../dist/state/index.js", import.meta.url));

function child(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, DIST_URL: pathToFileURL(DIST).href, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

function exited(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    proc.exitCode !== null || proc.signalCode !== null ? resolve() : proc.on("exit", () => resolve()),
  );
}

// Loops writes of states of varying size (up to ~200 KB) as fast as it can, optionally holding the lock.
const WRITER = `
const { localStateStore, newState, versionOf } = await import(process.env.DIST_URL);
const store = localStateStore(process.env.STATE_PATH);
if (process.env.TAKE_LOCK === "1") await store.lock("apply");
let read = await store.read();
let expect = versionOf(read);
let s = read ?? newState("crash");
for (let i = 0; ; i++) {
  const n = 1 + ((s.serial * 7919) % 400);
  s = { ...s, resources: Array.from({ length: n }, (_, k) => ({
    address: "r" + k, type: "t", id: "id-" + s.serial + "-" + k,
    inputs: { blob: "x".repeat(k) }, outputs: { serial: s.serial }, dependencies: k ? ["r" + (k - 1)] : [] })) };
  s = await store.write(s, expect);
  expect = versionOf(s);
  if (i === 0) process.stdout.write("ready\\n");
}
`;

describe("crash safety (SIGKILL during writes)", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(() => {
    if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npm run build\` before these tests`);
  });
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  function check(file: string, lineage?: string): State {
    const state = parseState(readFileSync(file, "utf8"), file); // throws if torn or invalid
    expect(validate("state.schema.json", state)).toEqual([]);
    expect(state.resources.every((r) => r.outputs.serial === state.serial - 1)).toBe(true);
    if (lineage) expect(state.lineage).toBe(lineage);
    return state;
  }

  it("leaves the state file (and the backup) an old or new complete version, and the lock takeable", async () => {
    const file = join(dir, "state", "crash.json");
    let lineage: string | undefined;
    let lastSerial = 0;
    const trials = 16;
    for (let trial = 0; trial < trials; trial++) {
      const takeLock = trial % 2 === 0;
      const proc = child(WRITER, { STATE_PATH: file, TAKE_LOCK: takeLock ? "1" : "0" });
      await waitForLine(proc, /^ready$/);
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 150));
      proc.kill("SIGKILL");
      await exited(proc);

      const state = check(file, lineage);
      lineage ??= state.lineage;
      expect(state.serial).toBeGreaterThan(lastSerial);
      lastSerial = state.serial;
      expect(await mode(file)).toBe(0o600);
      if (existsSync(`${file}.backup`)) {
        const backup = check(`${file}.backup`, lineage);
        // between "backup replaced" and "state replaced" both hold the same version
        expect([state.serial - 1, state.serial]).toContain(backup.serial);
        expect(await mode(`${file}.backup`)).toBe(0o600);
      }
      // A lock left by the killed writer does not block (its pid is dead on this host).
      if (takeLock) expect(existsSync(`${file}.lock`)).toBe(true);
      const lock = await localStateStore(file).lock("apply");
      await lock.release();
    }
    expect(lastSerial).toBeGreaterThan(trials);

    // Leftover temp files of the killed writers are removed once old; the state stays readable.
    const stateDir = join(dir, "state");
    const old = new Date(Date.now() - 3_600_000);
    for (const n of readdirSync(stateDir)) if (n.startsWith(".")) await utimes(join(stateDir, n), old, old);
    const store = localStateStore(file);
    const final = await overwrite(store, (await store.read())!);
    expect(final.serial).toBe(lastSerial + 1);
    expect(readdirSync(stateDir).sort()).toEqual(["crash.json", "crash.json.backup"]);
  }, 120_000);
});

// Every child waits for a common start time, then tries to take the lock once (no timeout).
const LOCKER = `
const { localStateStore } = await import(process.env.DIST_URL);
const store = localStateStore(process.env.STATE_PATH);
while (Date.now() < Number(process.env.START_AT)) {}
try {
  const lock = await store.lock("apply");
  process.stdout.write("WON " + lock.info.id + "\\n");
  process.stdin.resume();
  process.stdin.on("end", async () => { await lock.release(); process.exit(0); });
} catch (e) {
  process.stdout.write("LOST " + (e.name === "UserError" ? "" : "NOT-A-USER-ERROR ") + e.message + "\\n");
  process.exit(0);
}
`;

describe("cross-process lock races", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  for (const stale of [true, false]) {
    it(
      `exactly one of several processes gets the lock (` + `${stale ? "taking over a stale lock" : "no lock before"})`,
      async () => {
        const file = join(dir, "state", "race.json");
        for (let round = 0; round < 3; round++) {
          if (stale) {
            const { hostname } = await import("node:os");
            const { mkdir, writeFile } = await import("node:fs/promises");
            await mkdir(join(dir, "state"), { recursive: true });
            const pid = await deadPid();
            await writeFile(
              `${file}.lock`,
              JSON.stringify({
                id: `stale-${round}`,
                holder: "x@y",
                operation: "apply",
                time: new Date().toISOString(),
                pid,
                hostname: hostname(),
                version: "0",
                path: file,
              }),
            );
          }
          const startAt = String(Date.now() + 1500);
          const procs = Array.from({ length: 8 }, () => child(LOCKER, { STATE_PATH: file, START_AT: startAt }));
          const lines = await Promise.all(procs.map((p) => waitForLine(p, /^(WON|LOST) /)));
          const winners = lines.filter((l) => l.startsWith("WON "));
          expect(winners, lines.join("\n")).toHaveLength(1);
          const id = winners[0]!.slice(4);
          expect(JSON.parse(readFileSync(`${file}.lock`, "utf8")).id).toBe(id);
          for (const l of lines)
            if (l.startsWith("LOST ")) expect(l).toMatch(new RegExp(`^LOST state is locked by .*lock ID ${id}`));
          for (const p of procs) p.stdin!.end();
          await Promise.all(procs.map(exited));
          expect(existsSync(`${file}.lock`)).toBe(false);
        }
      },
      60_000,
    );
  }
});
