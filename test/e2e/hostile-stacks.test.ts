// Issue 12: hostile and broken stack files through the real CLI. Every row of
// test/fixtures/hostile/cases.ts, under validate, plan and apply (with and without --json), must
// end in its diagnostic at file:line:column, exit 1, no "internal error", no request to the cloud
// and no file written outside the stack's state directory.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { HOSTILE_CASES, type HostileCase } from "../fixtures/hostile/cases.js";
import { runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace, type CliResult } from "./helpers.js";
import { changed, tree } from "../support/file-tree.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: "projects/my-project/locations/us-central1/endpoints/churn" }],
};

const COMMANDS = [["validate"], ["validate", "--json"], ["plan"], ["plan", "--json"], ["apply", "--auto-approve"]];

const ws = useEmulatorWorkspace(SEED, "converge-hostile-");

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
  range?: { filename: string; start: { line: number; column: number; byte: number } };
}

/** A position given in UTF-16 code units (as the stderr line has it), as Terraform's JSON gives
 *  it: the column in code points, and the byte offset. */
function terraformPosition(
  source: string | Uint8Array,
  line: number,
  column: number,
): { line: number; column: number; byte: number } {
  const text = typeof source === "string" ? source : new TextDecoder("utf-8", { ignoreBOM: true }).decode(source);
  const start = text
    .split("\n")
    .slice(0, line - 1)
    .reduce((n, l) => n + l.length + 1, 0);
  const before = text.slice(start, start + column - 1);
  return { line, column: [...before].length + 1, byte: Buffer.byteLength(text.slice(0, start + column - 1)) };
}

/** The --json report: one document with errored: true and the diagnostic; validate's in
 *  Terraform's form (a range, its file as written or absolute), plan's under `converge`. */
function expectJsonReport(r: CliResult, c: HostileCase, proj: string, validate: boolean): void {
  const doc = JSON.parse(r.stdout) as {
    errored?: boolean;
    diagnostics?: JsonDiagnostic[];
    converge?: { diagnostics: JsonDiagnostic[] };
  };
  expect(doc.errored).toBe(true);
  const diagnostics = validate ? doc.diagnostics : doc.converge?.diagnostics;
  const d = diagnostics?.find((x) => x.severity === "error" && c.summary.every((s) => x.summary.includes(s)));
  expect(d, `no diagnostic ${JSON.stringify(c.summary)} in ${r.stdout.slice(0, 2000)}`).toBeDefined();
  if (!validate)
    return void expect([resolve(proj, d!.file ?? ""), d!.line, d!.column]).toEqual([join(proj, "stack.yaml"), ...c.at]);
  expect(resolve(proj, d!.range!.filename)).toBe(join(proj, "stack.yaml"));
  expect(d!.range!.start).toEqual(terraformPosition(c.text, ...c.at));
}

describe.concurrent("hostile stack files: a clear error, never a crash, a hang or an escape", () => {
  const rows = HOSTILE_CASES.flatMap((c, i) =>
    COMMANDS.map((cmd, j) => ({ c, cmd, dir: `${i}-${j}`, title: `${c.what}: converge ${cmd.join(" ")}` })),
  );
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
    if (cmd.includes("--json")) expectJsonReport(r, c, proj, cmd[0] === "validate");
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
