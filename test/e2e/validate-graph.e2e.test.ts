// `converge validate` exit codes and output, and `converge graph` DOT output. Neither reads
// state or calls the cloud.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ValidateOutput } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { decodeValidateOutput } from "../support/terraform-json-decoder.js";
import { INVALID_DIR } from "../fixtures/invalid/expectations.js";
import { REPO, expectExit, runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";

const QUICKSTART_STACK = join(REPO, "examples", "quickstart", "stack.yaml");

const ws = useEmulatorWorkspace({ projects: { "my-project": {} } }, "converge-validate-");

describe("converge validate", () => {
  it("exits 0 on a valid stack and says what it holds", async () => {
    const r = await runCli(["validate", "-f", QUICKSTART_STACK], { emulator: ws.emu });
    expectExit(r, 0);
    expect(r.stdout).toBe("Success! The stack is valid (3 resources, 1 variable, 2 outputs).\n");
    expect(r.stderr).toBe("");
  });

  it("exits 1 on an invalid stack with every error on stderr", async () => {
    const r = await runCli(["validate", "-f", join(INVALID_DIR, "20-several-errors.yaml")], { emulator: ws.emu });
    expectExit(r, 1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("4 errors, 0 warnings.");
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it(
    "--json prints Terraform's validate JSON: valid, counts, " + "diagnostics with a range (line, column, byte)",
    async () => {
      const ok = await runCli(["validate", "--json", "-f", QUICKSTART_STACK], { emulator: ws.emu });
      expectExit(ok, 0);
      expect(JSON.parse(ok.stdout)).toEqual({
        format_version: "1.0",
        valid: true,
        error_count: 0,
        warning_count: 0,
        diagnostics: [],
        errored: false,
      });
      const file = join(INVALID_DIR, "17-dependency-cycle.yaml");
      const bad = await runCli(["validate", "--json", "-f", file], { emulator: ws.emu });
      expectExit(bad, 1);
      const doc = JSON.parse(bad.stdout) as ValidateOutput;
      expect(validate("validate.schema.json", doc)).toEqual([]);
      expect(() => decodeValidateOutput(doc)).not.toThrow();
      expect(doc).toMatchObject({ valid: false, errored: true, error_count: 1, warning_count: 0 });
      // Line 6, column 3: the key "a" of the cycle's first resource, to the end of its line.
      const text = readFileSync(file, "utf8");
      const lineStart = text.split("\n").slice(0, 5).join("\n").length + 1;
      const line = text.split("\n")[5]!;
      expect(doc.diagnostics[0]).toEqual({
        severity: "error",
        summary: "dependency cycle: a -> b -> a",
        detail: "Break the cycle by removing a reference or a dependsOn entry.",
        range: {
          filename: expect.stringContaining("17-dependency-cycle.yaml"),
          start: { line: 6, column: 3, byte: lineStart + 2 },
          end: { line: 6, column: line.trimEnd().length + 1, byte: lineStart + line.trimEnd().length },
        },
      });
      expect(text.slice(lineStart + 2, lineStart + line.trimEnd().length)).toBe(line.trim());
    },
  );

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
