// Issue 12: hostile and broken stack files through the real CLI. Every row of
// test/fixtures/hostile/cases.ts, under validate, plan and apply (with and without --json), must
// end in its diagnostic at file:line:column, exit 1, no "internal error", no request to the cloud
// and no file written outside the stack's state directory.
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { HOSTILE_CASES, type HostileCase } from "../fixtures/hostile/cases.js";
import { runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace, type CliResult } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: "projects/my-project/locations/us-central1/endpoints/churn" }],
};

const COMMANDS = [["validate"], ["validate", "--json"], ["plan"], ["plan", "--json"], ["apply", "--auto-approve"]];

const ws = useEmulatorWorkspace(SEED, "converge-hostile-");

/** Every file and directory under `root` with its size and modification time. */
function tree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of readdirSync(root, { recursive: true }).map(String)) {
    const s = statSync(join(root, rel));
    out.set(rel, `${s.isDirectory() ? "dir" : s.size}:${s.mtimeMs}`);
  }
  return out;
}

/** Entries added, removed or changed between two trees. */
function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

/** The human diagnostic line for `c` on stderr (file:line:column: Error: summary). */
function diagnosticLine(stderr: string, c: HostileCase): string | undefined {
  const where = `stack.yaml:${c.at[0]}:${c.at[1]}: Error: `;
  return stderr.split("\n").find((l) => l.startsWith(where) && c.summary.every((s) => l.includes(s)));
}

interface JsonDiagnostic {
  severity: string;
  summary: string;
  file?: string;
  line?: number;
  column?: number;
}

/** The --json report: one document with errored: true and the diagnostic (its file as written or absolute). */
function expectJsonReport(r: CliResult, c: HostileCase, proj: string): void {
  const doc = JSON.parse(r.stdout) as { errored?: boolean; diagnostics?: JsonDiagnostic[] };
  expect(doc.errored).toBe(true);
  const d = doc.diagnostics?.find((x) => x.severity === "error" && c.summary.every((s) => x.summary.includes(s)));
  expect(d, `no diagnostic ${JSON.stringify(c.summary)} in ${r.stdout.slice(0, 2000)}`).toBeDefined();
  expect([resolve(proj, d!.file ?? ""), d!.line, d!.column]).toEqual([join(proj, "stack.yaml"), ...c.at]);
}

describe.concurrent("hostile stack files: a clear error, never a crash, a hang or an escape", () => {
  const rows = HOSTILE_CASES.flatMap((c, i) => COMMANDS.map((cmd, j) => ({ c, cmd, dir: `${i}-${j}`, title: `${c.what}: converge ${cmd.join(" ")}` })));
  it.each(rows)("$title", async ({ c, cmd, dir }) => {
    // The stack lives three levels down, so an escape from its directory stays inside `root`.
    const root = join(ws.dir, dir);
    const proj = join(root, "a", "b", "proj");
    mkdirSync(proj, { recursive: true });
    writeFileSync(join(proj, "stack.yaml"), c.text);
    const before = tree(root);

    const r = await runCli([...cmd, "-f", "stack.yaml"], { cwd: proj, emulator: ws.emu, timeoutMs: 30_000 });

    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, `${r.stdout.slice(0, 2000)}\n${r.stderr.slice(0, 2000)}`).toBe(1);
    expect(r.stderr).not.toContain("internal error");
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expect(diagnosticLine(r.stderr, c), `stderr:\n${r.stderr.slice(0, 4000)}`).toBeDefined();
    if (cmd.includes("--json")) expectJsonReport(r, c, proj);
    else expect(r.stdout).toBe("");
    const stateDir = relative(root, join(proj, "state")) + sep;
    expect(changed(before, tree(root)).filter((p) => !p.startsWith(stateDir))).toEqual([]);
  });
});

describe("after all the hostile stacks", () => {
  it("the emulator received no request at all", async () => {
    const s = await stats(ws.emu);
    expect(totalRequests(s), JSON.stringify(s.requests)).toBe(0);
  });
});
