// Issue 37, item 2: every option that writes a file (plan --out, import --generate --out, --state,
// emulator start --data) refuses what is not a regular file converge may replace: a device, a
// FIFO, a socket, a symlink to a device, a directory, a path under a file, a name too long, a path
// under /proc, / and an empty path are a clear error naming the path and the reason (exit 1, never
// "internal error"), before any cloud call; nothing there is replaced. A symlink to a regular file
// is written where it points.
import { execFileSync } from "node:child_process";
import { lstatSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT, RP } from "../fixtures/builders.js";
import { bindingYaml } from "./apply-helpers.js";
import { expectExit, runCli, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";

const SEED = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [{ name: RP, policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-writing-");
const ROOT = process.getuid?.() === 0;

/** An option that writes a file: the CLI's arguments with that file at `path`. */
interface WritingOption {
  name: string;
  args: (path: string) => string[];
  /** How the option names its file in errors. */
  role: string;
}

const OPTIONS: WritingOption[] = [
  { name: "plan --out", args: (p) => ["plan", "--out", p], role: "plan file" },
  {
    name: "import --generate --out",
    args: (p) => ["import", "--generate", RP, "--out", p, "--name", "gen", "--force"],
    role: "generated stack file",
  },
  { name: "apply --state", args: (p) => ["apply", "--auto-approve", "--state", p], role: "state file" },
  // Refused before it listens: with a file it may write, it would serve until stopped.
  {
    name: "emulator start --data",
    args: (p) => ["emulator", "start", "--port", "0", "--data", p],
    role: "emulator data file",
  },
];

/** A path that cannot be written: made in `dir`, checked afterwards to be as it was. */
interface BadPath {
  name: string;
  skip?: string;
  /** Makes the thing at the path; returns the path and what the error says of it. */
  plant: (dir: string) => { path: string; reason: RegExp };
  untouched?: (path: string) => void;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const BAD: BadPath[] = [
  {
    name: "a device node",
    skip: ROOT ? undefined : "mknod needs root",
    plant: (dir) => {
      const path = join(dir, "null");
      execFileSync("mknod", [path, "c", "1", "3"]);
      return { path, reason: /is a character device, not a regular file/ };
    },
    untouched: (path) => expect(lstatSync(path).isCharacterDevice()).toBe(true),
  },
  {
    name: "a FIFO",
    plant: (dir) => {
      const path = join(dir, "fifo");
      execFileSync("mkfifo", [path]);
      return { path, reason: /is a FIFO \(named pipe\), not a regular file/ };
    },
    untouched: (path) => expect(lstatSync(path).isFIFO()).toBe(true),
  },
  {
    name: "a socket",
    plant: (dir) => {
      const path = join(dir, "sock");
      // Exits without closing: the socket's file stays.
      const listen = `require("net").createServer().listen(${JSON.stringify(path)}, () => process.exit(0))`;
      execFileSync(process.execPath, ["-e", listen]);
      return { path, reason: /is a socket, not a regular file/ };
    },
    untouched: (path) => expect(lstatSync(path).isSocket()).toBe(true),
  },
  {
    name: "a symlink to a device",
    skip: ROOT ? undefined : "mknod needs root",
    plant: (dir) => {
      execFileSync("mknod", [join(dir, "dev"), "c", "1", "3"]);
      const path = join(dir, "link");
      symlinkSync("dev", path);
      return { path, reason: new RegExp(`links to ${esc(join(dir, "dev"))}, which is a character device`) };
    },
    untouched: (path) => {
      expect(readlinkSync(path)).toBe("dev");
      expect(statSync(path).isCharacterDevice()).toBe(true);
    },
  },
  {
    name: "a directory",
    plant: (dir) => {
      const path = join(dir, "sub");
      execFileSync("mkdir", [path]);
      return { path, reason: /is a directory, not a regular file/ };
    },
    untouched: (path) => expect(lstatSync(path).isDirectory()).toBe(true),
  },
  {
    name: "a path under a file",
    plant: (dir) => {
      writeFileSync(join(dir, "file"), "x\n");
      const reason = new RegExp(`${esc(join(dir, "file"))} is not a directory`);
      return { path: join(dir, "file", "out.json"), reason };
    },
  },
  { name: "a name too long", plant: (dir) => ({ path: join(dir, "n".repeat(256)), reason: /name too long/ }) },
  { name: "a path under /proc", plant: () => ({ path: "/proc/converge-e2e/out.json", reason: /\/proc/ }) },
  { name: "/proc/version", plant: () => ({ path: "/proc/version", reason: /\/proc/ }) },
  { name: "/", plant: () => ({ path: "/", reason: /is a directory, not a regular file/ }) },
];

/** A stack "team" granting nightly's viewer to one member, in its own directory. */
async function stackDir(name: string): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(join(dir, "state"), { recursive: true });
  const stack = `name: team\nprovider:\n  project: ${PROJECT}\n  location: us-central1\nresources:\n`;
  const binding = bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", [`user:${name}@example.com`]);
  writeFileSync(join(dir, "stack.yaml"), stack + binding);
  return dir;
}

const cli = (dir: string, args: string[]) => runCli(args, { cwd: dir, emulator: ws.emu, timeoutMs: 15_000 });
const slug = (s: string) => s.replace(/\W+/g, "-");

describe("options that write a file refuse what converge must not replace", { timeout: 300_000 }, () => {
  for (const option of OPTIONS) {
    for (const bad of BAD) {
      const title = `${option.name} at ${bad.name}${bad.skip ? ` (skipped: ${bad.skip})` : ""}`;
      it.skipIf(bad.skip !== undefined)(title, async () => {
        const dir = await stackDir(slug(`${option.name}-${bad.name}`));
        const { path, reason } = bad.plant(dir);
        const before = totalRequests(await stats(ws.emu));
        const r = await cli(dir, option.args(path));
        expectExit(r, 1);
        expect(r.stderr).not.toContain("internal error");
        expect(r.stderr).toContain(`${option.role} ${path}`);
        expect(r.stderr).toMatch(reason);
        bad.untouched?.(path);
        expect(totalRequests(await stats(ws.emu))).toBe(before);
      });
    }
  }

  it("an empty path is an error naming the option", async () => {
    const dir = await stackDir("empty");
    const before = totalRequests(await stats(ws.emu));
    for (const args of [
      ["plan", "--out", ""],
      ["import", "--generate", RP, "--out", "", "--name", "gen"],
    ]) {
      const r = await cli(dir, args);
      expectExit(r, 1);
      expect(r.stderr).toMatch(/--out/);
      expect(r.stderr).not.toContain("internal error");
    }
    expect(totalRequests(await stats(ws.emu))).toBe(before);
  });

  it("a symlink to a regular file is written where it points, and stays a link", async () => {
    const dir = await stackDir("symlinked");
    for (const [i, option] of OPTIONS.filter((o) => !o.name.startsWith("emulator")).entries()) {
      const target = join(dir, `target-${i}`);
      const link = join(dir, `link-${i}`);
      writeFileSync(target, option.name === "apply --state" ? "" : "old\n");
      symlinkSync(`target-${i}`, link);
      if (option.name === "apply --state") execFileSync("rm", [target]); // dangling: the first apply creates it
      expectExit(await cli(dir, option.args(link)), 0);
      expect(readlinkSync(link)).toBe(`target-${i}`);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readFileSync(target, "utf8")).not.toBe("old\n");
      expect(readFileSync(target, "utf8").length).toBeGreaterThan(10);
    }
  });
});
