// validate ends its process as soon as its output is written (src/cli/common.ts exitWhenFlushed),
// without node's wait for V8's background work: nothing it wrote may be lost on the way, through
// pipes, however much it writes, and its exit status stays the verdict.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/converge.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "converge-validate-exit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const N = 3000;
const resources = Array.from(
  { length: N },
  (_, i) =>
    `  r${i}:\n    type: cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n      name: rp-${i}` +
    `\n      role: not-a-role-${i}\n      members: [user:u${i}@example.com]\n`,
).join("");
writeFileSync(
  join(dir, "stack.yaml"),
  `name: exit\nprovider:\n  project: p1\n  location: us-central1\nresources:\n${resources}`,
);

describe("validate's prompt exit", () => {
  it("writes all of a large JSON report and every diagnostic through pipes, with exit status 1", () => {
    const r = spawnSync(process.execPath, [BIN, "validate", "-f", "stack.yaml", "--json"], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(r.status).toBe(1);
    expect(r.stdout.length).toBeGreaterThan(1_000_000);
    const out = JSON.parse(r.stdout) as { error_count: number; diagnostics: unknown[] };
    expect(out.error_count).toBe(N);
    expect(out.diagnostics).toHaveLength(N);
    expect(r.stderr.match(/not-a-role-/g)?.length).toBeGreaterThanOrEqual(N);
    expect(r.stderr.trimEnd().endsWith(`${N} errors, 0 warnings.`) || r.stderr.includes(`not-a-role-${N - 1}`)).toBe(
      true,
    );
  });

  it("exits 0 after the success line when the stack is valid", () => {
    writeFileSync(
      join(dir, "ok.yaml"),
      `name: ok\nprovider:\n  project: p1\n  location: us-central1\nresources:\n  a:\n    type: ` +
        `cloudnative:backup/v1:RestorePlanIamBinding\n    properties:\n      name: rp-1\n      role: ` +
        `roles/viewer\n      members: [user:a@example.com]\n`,
    );
    const r = spawnSync(process.execPath, [BIN, "validate", "-f", "ok.yaml"], { cwd: dir, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("Success! The stack is valid (1 resource, 0 variables, 0 outputs).\n");
  });
});
