// The quickstart example (examples/quickstart: cd there and converge plan), with
// --state in a temp dir so the checkout stays clean. The stack's embedded emulator keeps its
// world beside the state file.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO, expectExit, runCli, stackTraceLines, type CliResult, useTempDir } from "./helpers.js";

const QUICKSTART = join(REPO, "examples", "quickstart");

function snapshot(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir, { recursive: true }).map(String)) out[f] = statSync(join(dir, f)).mtimeMs;
  return out;
}

const ws = useTempDir("converge-quickstart-");
let before: Record<string, number>;
let first: CliResult;

beforeAll(async () => {
  before = snapshot(QUICKSTART);
  // No CLOUDNATIVE_EMULATOR_HOST: the stack's `endpoint: embedded` is used.
  first = await runCli(["plan", "--state", join(ws.dir, "quickstart.json")], { cwd: QUICKSTART });
});

describe("quickstart: converge plan", () => {
  it("exits 0 without errors", () => {
    expectExit(first, 0);
    expect(first.stderr).toBe("");
    expect(stackTraceLines(first.stdout + first.stderr)).toEqual([]);
  });

  it("reads the federation and shows the three creates", () => {
    const out = first.stdout;
    expect(out).toContain("lake: Reading...");
    expect(out).toMatch(
      /^lake: Read complete after \d+ms \[name=projects\/my-project\/locations\/us-central1\/federations\/lake\]$/m,
    );
    expect(out).toContain("  # restoreViewers will be created");
    expect(out).toContain("  # restoreAdmins will be created");
    expect(out).toContain("  # invoker will be created");
    expect(out).toContain('      + member  = "serviceAccount:data-eng@my-project.iam.gserviceaccount.com"');
    expect(out).toContain("Plan: 0 to import, 3 to add, 0 to change, 0 to destroy.");
    expect(out).toContain('  + lakeEndpoint = "thrift://10.0.0.7:9083"');
  });

  it("keeps the embedded emulator's world beside the state file, and writes no state", () => {
    expect(existsSync(join(ws.dir, "quickstart.emulator.world"))).toBe(true);
    expect(existsSync(join(ws.dir, "quickstart.json"))).toBe(false);
  });

  it("leaves the checkout untouched", () => {
    expect(snapshot(QUICKSTART)).toEqual(before);
  });

  it("plans the same again from the persisted world, and exits 2 with --detailed-exitcode", async () => {
    const again = await runCli(["plan", "--state", join(ws.dir, "quickstart.json"), "--detailed-exitcode"], {
      cwd: QUICKSTART,
    });
    expectExit(again, 2);
    expect(again.stdout).toContain("Plan: 0 to import, 3 to add, 0 to change, 0 to destroy.");
  });
});
