// Issue 12 (files), through the CLI: a FIFO, a directory or a symlink to a device where the state
// file, its lock, its .backup or CONVERGE_LOG_PATH goes is refused with a clear error (exit 1)
// before any cloud call changes anything: never waited on (a FIFO), read for ever (/dev/zero),
// replaced, removed or chmodded. A symlinked state file is updated where it points.
import { execFileSync } from "node:child_process";
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { State } from "../../src/generated/schemas.js";
import { PROJECT, RP } from "../fixtures/builders.js";
import { bindingYaml, membersOf } from "./apply-helpers.js";
import { expectExit, livePolicy, runCli, type CliResult, useEmulatorWorkspace } from "./helpers.js";

const SEED = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [{ name: RP, policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-special-");

type Kind = "fifo" | "dir" | "/dev/null" | "/dev/zero";
const KINDS: Kind[] = ["fifo", "dir", "/dev/null", "/dev/zero"];
const KIND: Record<Kind, string> = {
  fifo: "is a FIFO (named pipe)",
  dir: "is a directory",
  "/dev/null": "links to /dev/null, which is a character device",
  "/dev/zero": "links to /dev/zero, which is a character device",
};
const slug = (k: Kind) => k.replace(/\W/g, "");

function plant(kind: Kind, path: string): void {
  if (kind === "fifo") execFileSync("mkfifo", [path]);
  else if (kind === "dir") execFileSync("mkdir", [path]);
  else symlinkSync(kind, path);
}

/** Whatever was planted is still there, as it was. */
function expectUntouched(kind: Kind, path: string): void {
  const st = lstatSync(path);
  if (kind === "fifo") expect(st.isFIFO()).toBe(true);
  else if (kind === "dir") expect(st.isDirectory()).toBe(true);
  else expect(readlinkSync(path)).toBe(kind);
}

/** A stack "team" in its own directory, granting `members` on nightly; returns the directory. */
async function workspace(name: string, members = ["user:alice@example.com"]): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(join(dir, "state"), { recursive: true });
  await writeStack(dir, members);
  return dir;
}

const writeStack = (dir: string, members: string[]) =>
  writeFile(
    join(dir, "stack.yaml"),
    `name: team\nprovider:\n  project: ${PROJECT}\n  location: us-central1\nresources:\n` +
      bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", members),
  );

/** Runs the CLI in `dir`; a hang shows as a kill (exit code null) after 10 s. */
const cli = (dir: string, args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: dir, emulator: ws.emu, env, timeoutMs: 10_000 });

/** Runs `fn` for every kind at once; fails after all have ended (no CLI left running), with the first failure. */
async function eachKind(kinds: readonly Kind[], fn: (kind: Kind) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(kinds.map(fn));
  for (const r of results) if (r.status === "rejected") throw r.reason;
}

function expectRefused(r: CliResult, summary: string): void {
  expectExit(r, 1);
  expect(r.stderr).toContain(`Error: ${summary}`);
  expect(r.stderr).not.toContain("internal error");
}

describe("special files where converge keeps its files", { timeout: 120_000 }, () => {
  it("a state file that is a FIFO, a directory or a device link: plan, state list and apply refuse it", async () => {
    await eachKind(KINDS, async (kind) => {
      const dir = await workspace(`state-${slug(kind)}`, [`user:${slug(kind)}-state@example.com`]);
      const file = join(dir, "state", "team.json");
      plant(kind, file);
      for (const args of [["state", "list"], ["plan"], ["apply", "--auto-approve"]])
        expectRefused(await cli(dir, args), `state file ${file} ${KIND[kind]}, not a regular file`);
      expectUntouched(kind, file);
      expect(readdirSync(join(dir, "state"))).toEqual(["team.json"]);
    });
    expect(
      membersOf(await livePolicy(ws.emu, RP), "roles/gkebackup.viewer").filter((m) => m.includes("-state@")),
    ).toEqual([]);
  });

  it(
    "a lock file that is a FIFO, a directory or a device link: " + "apply and force-unlock refuse it, and it stays",
    async () => {
      await eachKind(KINDS, async (kind) => {
        const dir = await workspace(`lock-${slug(kind)}`, [`user:${slug(kind)}-lock@example.com`]);
        const lock = join(dir, "state", "team.json.lock");
        plant(kind, lock);
        const summary = `lock file ${lock} ${KIND[kind]}, not a regular file`;
        expectRefused(await cli(dir, ["apply", "--auto-approve"]), summary);
        expectRefused(await cli(dir, ["force-unlock", "5b0c1f7e-0000-4000-8000-000000000001"]), summary);
        expectUntouched(kind, lock);
      });
      expect(
        membersOf(await livePolicy(ws.emu, RP), "roles/gkebackup.viewer").filter((m) => m.includes("-lock@")),
      ).toEqual([]);
    },
  );

  it("a .backup that is a FIFO, a directory or a device link: apply refuses before any cloud change", async () => {
    await eachKind(KINDS, async (kind) => {
      const dir = await workspace(`backup-${slug(kind)}`);
      expectExit(await cli(dir, ["apply", "--auto-approve"]), 0);
      const file = join(dir, "state", "team.json");
      const before = readFileSync(file, "utf8");
      plant(kind, `${file}.backup`);
      await writeStack(dir, ["user:alice@example.com", `user:${slug(kind)}-backup@example.com`]);
      expectRefused(
        await cli(dir, ["apply", "--auto-approve"]),
        `state backup ${file}.backup ${KIND[kind]}, not a regular file`,
      );
      expectUntouched(kind, `${file}.backup`);
      expect(readFileSync(file, "utf8")).toBe(before);
    });
    expect(
      membersOf(await livePolicy(ws.emu, RP), "roles/gkebackup.viewer").filter((m) => m.includes("-backup@")),
    ).toEqual([]);
  });

  it(
    "CONVERGE_LOG_PATH that is a FIFO, a directory or a device " + "link is refused; the device keeps its mode",
    async () => {
      const devMode = statSync("/dev/null").mode;
      // Every run ends before the device's mode is checked (and put back: old code chmodded it).
      const results = await Promise.allSettled(
        (["fifo", "dir", "/dev/null"] as const).map(async (kind) => {
          const dir = await workspace(`log-${slug(kind)}`);
          const log = join(dir, "converge.log");
          plant(kind, log);
          const r = await cli(dir, ["plan"], { CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: log });
          expectRefused(r, `CONVERGE_LOG_PATH: the debug log ${log} ${KIND[kind]}, not a regular file`);
          expectUntouched(kind, log);
        }),
      );
      const devModeAfter = statSync("/dev/null").mode;
      if (devModeAfter !== devMode) execFileSync("chmod", [(devMode & 0o7777).toString(8), "/dev/null"]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
      expect(devModeAfter).toBe(devMode);
    },
  );

  it("with the embedded emulator, a refused CONVERGE_LOG_PATH still ends the process (exit 1, no hang)", async () => {
    const dir = join(ws.dir, "log-embedded");
    await mkdir(join(dir, "logs"), { recursive: true });
    await writeFile(join(dir, "seed.json"), JSON.stringify(SEED));
    await writeFile(
      join(dir, "stack.yaml"),
      `name: team\nprovider:\n  project: ${PROJECT}\n  location: us-central1\n  ` +
        `endpoint: embedded\n  seed: seed.json\nresources: {}\n`,
    );
    const r = await runCli(["plan"], {
      cwd: dir,
      env: { CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: join(dir, "logs") },
      timeoutMs: 10_000,
    });
    expectRefused(r, `CONVERGE_LOG_PATH: the debug log ${join(dir, "logs")} is a directory, not a regular file`);
  });

  it(
    "a symlinked state file is updated where it points; the link " + "stays, backup and lock go beside the target",
    async () => {
      const dir = await workspace("linked");
      await mkdir(join(dir, "shared"));
      const link = join(dir, "state", "team.json");
      const target = join(dir, "shared", "team.json");
      symlinkSync("../shared/team.json", link); // dangling until the first apply
      expectExit(await cli(dir, ["apply", "--auto-approve"]), 0);
      const first = JSON.parse(readFileSync(target, "utf8")) as State;
      await writeStack(dir, ["user:alice@example.com", "user:linked@example.com"]);
      expectExit(await cli(dir, ["apply", "--auto-approve"]), 0);
      expect(readlinkSync(link)).toBe("../shared/team.json");
      expect(readdirSync(join(dir, "state"))).toEqual(["team.json"]);
      expect(readdirSync(join(dir, "shared")).sort()).toEqual(["team.json", "team.json.backup"]);
      expect(JSON.parse(readFileSync(`${target}.backup`, "utf8"))).toEqual(first);
      expect((JSON.parse(readFileSync(target, "utf8")) as State).serial).toBe(first.serial + 1);
      expect((await cli(dir, ["state", "list"])).stdout).toBe("viewers\n");
    },
  );
});
