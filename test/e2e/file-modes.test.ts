// Issue 12 (files): whatever the umask, the state directory converge creates is 0700 and every
// file it writes there is 0600: the state, its .backup, the lock (seen while an apply holds it),
// the embedded emulator's world file, and the CONVERGE_LOG_PATH debug log. Modes are checked, not
// EACCES, so the test means the same as root. So are the directories `plan --out` and
// `emulator start --data` create (0700) and what they write there (0600).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT, RP } from "../fixtures/builders.js";
import { bindingYaml, clearFaults, setFaults } from "./apply-helpers.js";
import { BIN, expectExit, runCli, type CliResult, useEmulatorWorkspace } from "./helpers.js";

const SEED = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [{ name: RP, policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-modes-");

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
const stack = (name: string, provider = "") =>
  `name: ${name}\nprovider:\n  project: ${PROJECT}\n  location: us-central1\n${provider}resources:\n` +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]);

/** The mode `file` had while `run` was still going (it must appear before the run ends). */
async function modeWhileRunning(run: Promise<CliResult>, file: string): Promise<string> {
  let done = false;
  void run.finally(() => (done = true));
  while (!done) {
    if (existsSync(file)) return modeOf(file);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${file} never appeared while the command ran:\n${(await run).stderr}`);
}

describe("file modes whatever the umask", { timeout: 60_000 }, () => {
  for (const umask of ["000", "022", "077"]) {
    it(`umask ${umask}: state directory 0700; state, backup, lock and debug log 0600`, async () => {
      const dir = join(ws.dir, `remote-${umask}`);
      await mkdir(dir);
      await writeFile(join(dir, "stack.yaml"), stack("remote"));
      const log = join(dir, "converge.log");
      const env = { CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: log };
      // Slow answers keep the lock held long enough to look at it.
      await setFaults(ws.emu, { latencyMs: 300 });
      try {
        const run = runCli(["apply", "--auto-approve"], { cwd: dir, emulator: ws.emu, env, umask });
        expect(await modeWhileRunning(run, join(dir, "state", "remote.json.lock"))).toBe("600");
        expectExit(await run, 0);
      } finally {
        await clearFaults(ws.emu);
      }
      // a second write: .backup
      expectExit(await runCli(["state", "mv", "viewers", "readers"], { cwd: dir, umask }), 0);
      expect(modeOf(join(dir, "state"))).toBe("700");
      expect(readdirSync(join(dir, "state")).sort()).toEqual(["remote.json", "remote.json.backup"]);
      for (const f of ["remote.json", "remote.json.backup"]) expect(modeOf(join(dir, "state", f)), f).toBe("600");
      expect(modeOf(log)).toBe("600");
    });

    it(`umask ${umask}: the embedded emulator's state directory is 0700 and its world file 0600`, async () => {
      const dir = join(ws.dir, `embedded-${umask}`);
      await mkdir(dir);
      await writeFile(join(dir, "seed.json"), JSON.stringify(SEED));
      await writeFile(join(dir, "stack.yaml"), stack("embedded", "  endpoint: embedded\n  seed: seed.json\n"));
      const r = await runCli(["plan"], { cwd: dir, umask });
      expectExit(r, 0);
      expect(modeOf(join(dir, "state"))).toBe("700");
      // The world, and the digest of the seed it was made from.
      expect(readdirSync(join(dir, "state")).sort()).toEqual([
        "embedded.emulator.world",
        "embedded.emulator.world.seed",
      ]);
      expect(modeOf(join(dir, "state", "embedded.emulator.world"))).toBe("600");
      expect(modeOf(join(dir, "state", "embedded.emulator.world.seed"))).toBe("600");
    });

    it(`umask ${umask}: the directories plan --out creates are 0700, the plan 0600`, async () => {
      const dir = join(ws.dir, `plan-out-${umask}`);
      await mkdir(dir);
      await writeFile(join(dir, "stack.yaml"), stack("planout"));
      const r = await runCli(["plan", "--out", join("plans", "a", "b.plan")], { cwd: dir, emulator: ws.emu, umask });
      expectExit(r, 0);
      for (const d of ["plans", join("plans", "a")]) expect(modeOf(join(dir, d)), d).toBe("700");
      expect(modeOf(join(dir, "plans", "a", "b.plan"))).toBe("600");
    });

    it(`umask ${umask}: the directories emulator start --data creates are 0700, the world file 0600`, async () => {
      const dir = join(ws.dir, `emulator-data-${umask}`);
      await mkdir(dir);
      const data = join(dir, "worlds", "x", "world.json");
      const child = spawn(
        "/bin/sh",
        [
          "-c",
          `umask ${umask} && exec "$0" "$@"`,
          process.execPath,
          BIN,
          "emulator",
          "start",
          "--port",
          "0",
          "--data",
          data,
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      let ended = false;
      child.on("close", () => (ended = true));
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      try {
        // The world file is written once the emulator has started; the modes are looked at while it runs.
        while (!(out.includes("listening on") && existsSync(data))) {
          if (ended) throw new Error(`the emulator ended before writing its world:\n${out}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        child.kill("SIGKILL");
      }
      for (const d of ["worlds", join("worlds", "x")]) expect(modeOf(join(dir, d)), d).toBe("700");
      expect(modeOf(data)).toBe("600");
    });
  }
});
