// Files the CLI reads as the user's input (the stack given by -f, YAML or program, --var-file,
// provider.seed, a saved plan for `apply PLANFILE` and `show PLANFILE`, the state given by --state
// and `state push FILE`, the embedded emulator's data file) that are not regular files are refused
// at once with a clear error (exit 1): a FIFO is never waited on, /dev/zero never read for ever.
// A regular file over the size cap is refused without being read. No cloud call, nothing written.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import {
  expectExit,
  runCli,
  stackTraceLines,
  stats,
  totalRequests,
  useEmulatorWorkspace,
  type CliResult,
} from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: "projects/my-project/locations/us-central1/restorePlans/nightly" }],
};
const ws = useEmulatorWorkspace(SEED, "converge-input-files-");

const MiB = 1024 * 1024;
const STACK =
  "name: files\nprovider:\n  project: my-project\n  location: " +
  "us-central1\nconfig:\n  who: { type: string, default: x }\nresources: {}\n";
const embedded = (seed: string) =>
  `name: files\nprovider:\n  project: my-project\n  location: us-central1\n  ` +
  `endpoint: embedded\n  seed: ${seed}\nresources: {}\n`;

type Special = "fifo" | "/dev/zero" | "large";
const KIND: Record<Special, string> = {
  fifo: "is a FIFO (named pipe), not a regular file",
  "/dev/zero": "is a character device, not a regular file",
  large: "",
};

/** A fresh directory for one case, with state/ (left empty by every refusal). */
async function caseDir(name: string): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(join(dir, "state"), { recursive: true });
  return dir;
}

/** Puts the special file at `path` (a FIFO, a link to /dev/zero, or a sparse file of `bytes`); returns its path. */
function plant(kind: Special, path: string, bytes = 0): string {
  if (kind === "fifo") execFileSync("mkfifo", [path]);
  else if (kind === "/dev/zero") symlinkSync("/dev/zero", path);
  else {
    const fd = openSync(path, "w");
    closeSync(fd);
    execFileSync("truncate", ["-s", String(bytes), path]);
  }
  return path;
}

/** The summary for `what path` of this kind; for a link to /dev/zero, as the state store words it. */
function summary(kind: Special, what: string, path: string, capMiB: number): string {
  if (kind === "large") return `${what} ${path} is larger than ${capMiB} MiB, the most converge reads`;
  if (kind === "/dev/zero")
    return `${what} ${path} links to /dev/zero, which is a character device, not a regular file`;
  return `${what} ${path} ${KIND[kind]}`;
}

/** Runs the CLI in `dir`; a hang shows as a kill (exit code null) after 10 s. */
const cli = (dir: string, args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: dir, emulator: ws.emu, env, timeoutMs: 10_000 });

function expectRefused(r: CliResult, text: string, dir: string): void {
  expectExit(r, 1);
  expect(r.stderr).toContain(text);
  expect(r.stderr).not.toContain("internal error");
  expect(stackTraceLines(r.stderr)).toEqual([]);
  expect(readdirSync(join(dir, "state"))).toEqual([]);
}

interface Case {
  name: string;
  what: string;
  capMiB: number;
  /** Plants the file (via `put`) and returns the command line and the path the message names. */
  arrange(dir: string, put: (path: string) => string): { args: string[]; path: string; env?: Record<string, string> };
}

const CASES: Case[] = [
  {
    name: "-f STACK (YAML)",
    what: "stack file",
    capMiB: 64,
    arrange: (dir, put) => ({ args: ["plan", "-f", put(join(dir, "stack.yaml"))], path: join(dir, "stack.yaml") }),
  },
  {
    name: "-f STACK (a program)",
    what: "stack file",
    capMiB: 64,
    arrange: (dir, put) => ({ args: ["plan", "-f", put(join(dir, "stack.ts"))], path: join(dir, "stack.ts") }),
  },
  {
    name: "--var-file FILE",
    what: "--var-file",
    capMiB: 64,
    arrange(dir, put) {
      writeFileSync(join(dir, "stack.yaml"), STACK);
      return { args: ["plan", "--var-file", put(join(dir, "vars.yaml"))], path: join(dir, "vars.yaml") };
    },
  },
  {
    name: "provider.seed",
    what: "seed file",
    capMiB: 64,
    arrange(dir, put) {
      writeFileSync(join(dir, "stack.yaml"), embedded("seed.yaml"));
      return { args: ["plan"], path: put(join(dir, "seed.yaml")) };
    },
  },
  {
    name: "apply PLANFILE",
    what: "the saved plan",
    capMiB: 500,
    arrange(dir, put) {
      writeFileSync(join(dir, "stack.yaml"), STACK);
      return { args: ["apply", put(join(dir, "saved.json"))], path: join(dir, "saved.json") };
    },
  },
  {
    name: "show PLANFILE",
    what: "the saved plan",
    capMiB: 500,
    arrange(dir, put) {
      writeFileSync(join(dir, "stack.yaml"), STACK);
      return { args: ["show", put(join(dir, "saved.json"))], path: join(dir, "saved.json") };
    },
  },
  {
    name: "state push FILE",
    what: "state file",
    capMiB: 500,
    arrange(dir, put) {
      writeFileSync(join(dir, "stack.yaml"), STACK);
      return { args: ["state", "push", put(join(dir, "pushed.json"))], path: join(dir, "pushed.json") };
    },
  },
];

/** One case with the file planted as `kind`. */
async function refusesSpecial(c: Case, kind: "fifo" | "/dev/zero"): Promise<void> {
  const dir = await caseDir(`${c.name.replace(/\W+/g, "-")}-${kind.replace(/\W/g, "")}`);
  const { args, path, env } = c.arrange(dir, (p) => plant(kind, p));
  expectRefused(await cli(dir, args, env), `Error: ${summary(kind, c.what, path, c.capMiB)}`, dir);
}

describe.concurrent("input files that are FIFOs are refused at once, never waited on", { timeout: 60_000 }, () => {
  for (const c of CASES) it(`${c.name} that is a FIFO`, () => refusesSpecial(c, "fifo"));

  it("the embedded emulator's data file (beside the state) that is a FIFO", async () => {
    const dir = await caseDir("data-file-fifo");
    writeFileSync(join(dir, "stack.yaml"), embedded("seed.json"));
    writeFileSync(join(dir, "seed.json"), JSON.stringify(SEED));
    const data = plant("fifo", join(dir, "state", "files.emulator.world"));
    // Without CLOUDNATIVE_EMULATOR_HOST, which would take the place of the embedded emulator.
    const r = await runCli(["plan"], { cwd: dir, timeoutMs: 10_000 });
    expectExit(r, 1);
    expect(r.stderr).toContain(`emulator data file ${data} is a FIFO (named pipe), not a regular file`);
    expect(r.stderr).not.toContain("internal error");
    expect(readdirSync(join(dir, "state"))).toEqual(["files.emulator.world"]);
  });

  it("the seed's message is at provider.seed in the stack", async () => {
    const dir = await caseDir("seed-position");
    writeFileSync(join(dir, "stack.yaml"), embedded("seed.yaml"));
    const seed = plant("fifo", join(dir, "seed.yaml"));
    const r = await cli(dir, ["validate"]);
    expectRefused(r, `stack.yaml:6:9: Error: seed file ${seed} is a FIFO (named pipe), not a regular file`, dir);
  });
});

// One at a time: before the fix each of these read /dev/zero until killed (gigabytes each).
describe("input files that are /dev/zero are refused at once, never read", { timeout: 60_000 }, () => {
  for (const c of CASES) it(`${c.name} that links to /dev/zero`, () => refusesSpecial(c, "/dev/zero"));

  it("-f /dev/zero and --var-file /dev/zero themselves", async () => {
    const dir = await caseDir("dev-zero-direct");
    expectRefused(
      await cli(dir, ["plan", "-f", "/dev/zero"]),
      "Error: stack file /dev/zero is a character device, not a regular file",
      dir,
    );
    writeFileSync(join(dir, "stack.yaml"), STACK);
    expectRefused(
      await cli(dir, ["plan", "--var-file", "/dev/zero"]),
      "Error: --var-file /dev/zero is a character device, not a regular file",
      dir,
    );
    expectRefused(
      await cli(dir, ["validate", "--var-file", "/dev/zero"]),
      "Error: --var-file /dev/zero is a character device, not a regular file",
      dir,
    );
  });
});

describe.concurrent("input files over the size cap are refused without being read", { timeout: 60_000 }, () => {
  for (const c of CASES) {
    it(`${c.name} of ${c.capMiB} MiB and one byte`, async () => {
      const dir = await caseDir(`${c.name.replace(/\W+/g, "-")}-large`);
      const { args, path, env } = c.arrange(dir, (p) => plant("large", p, c.capMiB * MiB + 1));
      expectRefused(await cli(dir, args, env), `Error: ${summary("large", c.what, path, c.capMiB)}`, dir);
    });
  }

  it("a --state file of 500 MiB and one byte", async () => {
    const dir = await caseDir("state-large");
    writeFileSync(join(dir, "stack.yaml"), STACK);
    const state = plant("large", join(dir, "big.json"), 500 * MiB + 1);
    const r = await cli(dir, ["plan", "--state", state]);
    expectRefused(r, `Error: ${summary("large", "state file", state, 500)}`, dir);
  });
});

describe("after all the refused files", () => {
  it("the emulator received no request at all, and no state was written", async () => {
    const s = await stats(ws.emu);
    expect(totalRequests(s), JSON.stringify(s.requests)).toBe(0);
    const found = readdirSync(ws.dir, { recursive: true })
      .map(String)
      .filter((f) => f.includes(`state/`) && !f.endsWith(".emulator.world"));
    expect(found).toEqual([]);
  });
});
