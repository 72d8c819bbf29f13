// `converge validate` exit codes and output, and `converge graph` DOT output. Neither reads
// state or calls the cloud.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INVALID_DIR } from "../fixtures/invalid/expectations.js";
import { REPO, expectExit, runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";

const QUICKSTART_STACK = join(REPO, "examples", "quickstart", "stack.yaml");

const ws = useEmulatorWorkspace({ projects: { "my-project": {} } }, "converge-validate-");

describe("converge validate", () => {
  it("exits 0 on a valid stack and says what it holds", async () => {
    const r = await runCli(["validate", "-f", QUICKSTART_STACK], { emulator: ws.emu });
    expectExit(r, 0);
    expect(r.stdout).toBe("Success! The stack is valid (3 resources, 1 variables, 2 outputs).\n");
    expect(r.stderr).toBe("");
  });

  it("exits 1 on an invalid stack with every error on stderr", async () => {
    const r = await runCli(["validate", "-f", join(INVALID_DIR, "20-several-errors.yaml")], { emulator: ws.emu });
    expectExit(r, 1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("4 error(s), 0 warning(s).");
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it("--json prints {valid, error_count, warning_count, diagnostics}", async () => {
    const ok = await runCli(["validate", "--json", "-f", QUICKSTART_STACK], { emulator: ws.emu });
    expectExit(ok, 0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ valid: true, error_count: 0, warning_count: 0, diagnostics: [] });
    const bad = await runCli(["validate", "--json", "-f", join(INVALID_DIR, "17-dependency-cycle.yaml")], { emulator: ws.emu });
    expectExit(bad, 1);
    const doc = JSON.parse(bad.stdout) as { valid: boolean; error_count: number; diagnostics: { line: number; column: number; summary: string }[] };
    expect(doc.valid).toBe(false);
    expect(doc.error_count).toBe(1);
    expect(doc.diagnostics[0]).toMatchObject({ line: 6, column: 3, summary: "dependency cycle: a -> b -> a" });
  });

  it("exits 1 when the stack file does not exist (default stack.yaml in the working directory)", async () => {
    const r = await runCli(["validate"], { emulator: ws.emu, cwd: ws.dir });
    expectExit(r, 1);
    expect(r.stderr).toContain("stack file stack.yaml does not exist");
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it("never calls the cloud", async () => {
    expect(totalRequests(await stats(ws.emu))).toBe(0);
  });
});

describe("converge graph", () => {
  it("prints the quickstart's dependency graph as DOT", async () => {
    const r = await runCli(["graph", "-f", QUICKSTART_STACK], { emulator: ws.emu });
    expectExit(r, 0);
    const dot = r.stdout;
    expect(dot.startsWith("digraph converge {\n")).toBe(true);
    expect(dot.trimEnd().endsWith("}")).toBe(true);
    expect(dot).toContain('"lake" [label = "lake\\ncloudnative:metastore/v1alpha:getFederation", shape = note];');
    expect(dot).toContain('"restoreViewers" [label = "restoreViewers\\ncloudnative:backup/v1:RestorePlanIamBinding"];');
    expect(dot).toContain('"invoker" [label = "invoker\\ncloudnative:aiplatform/v1beta1:EndpointIamMember"];');
    expect(dot).toContain('"invoker" -> "lake";');
    expect(dot).toContain('"invoker" -> "restoreViewers";');
    expect(dot.match(/->/g)).toHaveLength(2);
  });

  it("exits 1 on an invalid stack", async () => {
    const r = await runCli(["graph", "-f", join(INVALID_DIR, "17-dependency-cycle.yaml")], { emulator: ws.emu });
    expectExit(r, 1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("dependency cycle: a -> b -> a");
  });

  it("never calls the cloud", async () => {
    expect(totalRequests(await stats(ws.emu))).toBe(0);
  });
});
