// Issue 6 end to end: the access view, Markdown plans and --strict through the real CLI.
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { marked } from "marked";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDir } from "./helpers.js";

const root = join(import.meta.dirname, "../..");
const BIN = join(root, "bin/converge.js");
const ws = useTempDir("converge-review-");

function cli(args: string[], cwd = ws.dir) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", CLOUDNATIVE_EMULATOR_HOST: "" },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  cpSync(join(root, "examples/quickstart"), ws.dir, { recursive: true });
  rmSync(join(ws.dir, "state"), { recursive: true, force: true });
});

describe("review output", () => {
  it(
    "the quickstart's access view lists exactly the principals the stack " +
      "grants (and who the authoritative binding removes)",
    () => {
      const r = cli(["plan", "--view", "access"]);
      expect(r.code).toBe(0);
      const granted = [...r.stdout.matchAll(/^\s+\+ (\S+)\s+(\S+)/gm)].map((m) => `${m[1]} ${m[2]}`).sort();
      expect(granted).toEqual([
        "group:sre@example.com roles/gkebackup.viewer",
        "serviceAccount:data-eng@my-project.iam.gserviceaccount.com roles/aiplatform.user",
        "user:alice@example.com roles/gkebackup.viewer",
        "user:oncall@example.com roles/gkebackup.admin",
      ]);
      const revoked = [...r.stdout.matchAll(/^\s+- (\S+)\s+(\S+)/gm)].map((m) => `${m[1]} ${m[2]}`);
      expect(revoked).toEqual(["user:carol@example.com roles/gkebackup.viewer"]);
    },
  );

  it("a binding whose members shrink shows who loses access, in the view and in access_changes", () => {
    expect(cli(["apply", "--auto-approve"]).code).toBe(0);
    const stack = join(ws.dir, "stack.yaml");
    const text = readFileSync(stack, "utf8");
    writeFileSync(
      stack,
      text.replace("members: [group:sre@example.com, user:alice@example.com]", "members: [group:sre@example.com]"),
    );
    const view = cli(["plan", "--view", "access"]);
    expect(view.stdout).toMatch(/- user:alice@example\.com\s+roles\/gkebackup\.viewer\s+\(restoreViewers\)/);
    expect(view.stdout).not.toMatch(/^\s+\+ /m);
    const json = JSON.parse(cli(["plan", "--json"]).stdout);
    expect(json.converge.access_changes.changes).toEqual([
      expect.objectContaining({
        action: "revoke",
        principal: "user:alice@example.com",
        role: "roles/gkebackup.viewer",
        addresses: ["restoreViewers"],
      }),
    ]);
    writeFileSync(stack, text);
  });

  it("the Markdown plan parses and has the counts table, access delta, lint and the full plan", () => {
    rmSync(join(ws.dir, "state"), { recursive: true, force: true });
    const r = cli(["plan", "--format", "markdown"]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("## converge plan")).toBe(true);
    const tokens = marked.lexer(r.stdout);
    const headings = tokens.filter((t) => t.type === "heading").map((t) => (t as { text: string }).text);
    expect(headings).toEqual(["converge plan: `quickstart`", "Access changes", "Lint"]);
    const tables = tokens.filter((t) => t.type === "table") as unknown as {
      header: { text: string }[];
      rows: { text: string }[][];
    }[];
    expect(tables[0]!.header.map((h) => h.text)).toEqual(["Import", "Add", "Change", "Destroy", "Drift"]);
    expect(tables[0]!.rows[0]!.map((c) => c.text)).toEqual(["0", "3", "0", "0", "0"]);
    expect(tables[1]!.rows).toHaveLength(5);
    const html = marked.parse(r.stdout) as string;
    expect(html).toContain("<details><summary>Full plan</summary>");
    expect(html).toContain("Plan: 0 to import, 3 to add, 0 to change, 0 to destroy.");
  });

  it("--strict turns a lint warning into exit 1 for validate and plan; without it they pass", () => {
    const f = join(root, "test/fixtures/lint/basic-role-bad.yaml");
    expect(cli(["validate", "-f", f]).code).toBe(0);
    const strict = cli(["validate", "-f", f, "--strict"]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/basic-role-bad\.yaml:8:\d+: Error: grant: roles\/editor is a basic role/);
    const plan = cli(["plan", "-f", f, "--strict", "--state", join(ws.dir, "strict.json")]);
    expect(plan.code).toBe(1);
  });
});
