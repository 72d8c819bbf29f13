// Issue 47, item 1: `plan --format markdown` and `show --format markdown` cannot be broken out of.
// Condition titles and descriptions from the stack and from the server (the live policy the
// emulator holds) carry HTML, `|`, backticks, code fences and newlines; rendered with a GFM
// renderer (marked), the page has exactly converge's structure and shows each value as text.
// Through the built CLI against the emulator. Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import type { AccessDelta, EmulatorWorld } from "../../src/generated/schemas.js";
import { shortText } from "../../src/cli/render/access-summary.js";
import { rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useStackWorkspace } from "./helpers.js";

const EXPR = 'request.time < timestamp("2031-01-01T00:00:00Z")';
const EXPR2 = 'request.time < timestamp("2032-01-01T00:00:00Z")';
/** The issue's own title: ends the access table and opens a block that swallows the rest. */
const STACK_TITLE = "x | **nothing to see** </td></tr></table><details><summary>ok</summary>";
const STACK_DESC = "a\n```\n</details>\n# Owned\n- item\n| a | b |\n`` ` ``` `code` \\|";
const GRANT_TITLE = "```\n</details>\n\n<details><summary>gotcha</summary>\n\n| x | y |\n|---|---|";
const SERVER_TITLE = "srv `` | <b>bold</b>\n## heading\n<!--";
const SERVER_DESC = "~~~\n```\n</details>\n\n<details><summary>server</summary>\n- [x] done";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("weekly"),
      policy: {
        version: 3,
        bindings: [
          {
            role: "roles/gkebackup.viewer",
            members: ["user:a@example.com"],
            condition: { title: SERVER_TITLE, description: SERVER_DESC, expression: EXPR },
          },
          { role: "roles/gkebackup.backupAdmin", members: ["user:mallory@example.com"] },
        ],
      },
    },
  ],
};

const q = (s: string) => JSON.stringify(s);
const STACK = `${stackHead("hostile")}  whole:
    type: cloudnative:backup/v1:RestorePlanIamPolicy
    properties:
      name: weekly
      bindings:
        - role: roles/gkebackup.viewer
          members: ["user:a@example.com"]
          condition: { title: ${q(STACK_TITLE)}, description: ${q(STACK_DESC)}, expression: '${EXPR}' }
        - role: roles/gkebackup.admin
          members: ["user:b@example.com"]
          condition: { title: ${q(GRANT_TITLE)}, expression: '${EXPR2}' }
`;

const ws = useStackWorkspace(SEED, "converge-md-hostile-", STACK, "hostile.json");

/** The text a reader sees of rendered HTML: tags dropped, entities decoded. */
function visibleText(html: string): string {
  const entities: Record<string, string> = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'" };
  return html.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot|#39);/g, (e) => entities[e]!);
}

/** A value as converge shows it on one line: newlines as `\n`. */
const oneLine = (s: string) => s.replace(/\n/g, "\\n");

function checkStructure(md: string, changes: number): void {
  const tokens = marked.lexer(md).filter((t) => t.type !== "space");
  // Title; target; counts; counts table; the review page's mention; access changes; lint; the full plan.
  expect(tokens.map((t) => t.type)).toEqual([
    "heading",
    "paragraph",
    "paragraph",
    "table",
    "paragraph",
    "heading",
    "table",
    "paragraph",
    "list",
    "heading",
    "paragraph",
    "html",
    "code",
    "html",
  ]);
  const headings = tokens.filter((t): t is Tokens.Heading => t.type === "heading");
  expect(headings.map((h) => h.depth)).toEqual([2, 3, 3]);
  expect(headings.slice(1).map((h) => h.text)).toEqual(["Access changes", "Lint"]);
  const tables = tokens.filter((t): t is Tokens.Table => t.type === "table");
  expect(tables[1]!.header).toHaveLength(6);
  expect(tables[1]!.rows).toHaveLength(changes);
  for (const row of tables[1]!.rows) expect(row).toHaveLength(6);
  const list = tokens.find((t): t is Tokens.List => t.type === "list")!;
  expect(list.items).toHaveLength(1);
  const html = marked.parse(md) as string;
  expect(html.match(/<details>/g)).toHaveLength(1);
  expect(html.match(/<\/details>/g)).toHaveLength(1);
  expect(html.match(/<summary>/g)).toHaveLength(1);
  expect(html).toContain("<details><summary>Full plan</summary>");
  expect(html.match(/<table>/g)).toHaveLength(2);
  expect(html.match(/<h[1-6]/g)).toHaveLength(3);
  expect(html).not.toMatch(/<b>|<!--|<input/);
  // The full plan is the last thing: everything above it stays outside the collapsed block.
  expect(html.trimEnd().endsWith("</code></pre>\n</details>")).toBe(true);
  const code = tokens.find((t): t is Tokens.Code => t.type === "code")!;
  expect(code.text).toContain("Plan: 0 to import, 1 to add, 0 to change, 0 to destroy.");
  // Above the collapsed plan, each value is visible as text, shortened past SUMMARY_TEXT_MAX
  // characters: a title in its table cell as it is (newlines as `\n`), titles and descriptions in
  // the reworded condition as JSON strings. The full plan shows each whole.
  const [page, full] = html.split("<details>") as [string, string];
  const seen = visibleText(page);
  expect(seen).toContain(oneLine(shortText(GRANT_TITLE)));
  for (const v of [STACK_TITLE, STACK_DESC, SERVER_TITLE, SERVER_DESC])
    expect(seen).toContain(JSON.stringify(shortText(v)));
  // The stack's values are whole in the full plan's diff (the server's are in plan --view access).
  for (const v of [STACK_TITLE, STACK_DESC, GRANT_TITLE]) expect(visibleText(full)).toContain(JSON.stringify(v));
}

describe("Markdown of a plan with hostile condition wording", { timeout: 60_000 }, () => {
  it("plan and show --format markdown keep converge's structure, each value shown as text", async () => {
    const json = await runCli(["plan", "--json"], { cwd: ws.dir, emulator: ws.emu });
    expectExit(json, 0);
    const delta = (JSON.parse(json.stdout) as { converge: { access_changes: AccessDelta } }).converge.access_changes;
    expect(delta.changes.map((c) => `${c.action} ${c.principal}`).sort()).toEqual([
      "grant user:b@example.com",
      "revoke user:mallory@example.com",
    ]);
    expect(delta.condition_changes).toHaveLength(1);

    const md = await runCli(["plan", "--format", "markdown", "--out", "plan.bin"], { cwd: ws.dir, emulator: ws.emu });
    expectExit(md, 0);
    checkStructure(md.stdout, 2);
    const shown = await runCli(["show", "--format", "markdown", join(ws.dir, "plan.bin")], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expectExit(shown, 0);
    checkStructure(shown.stdout, 2);
    // The server's wording, shortened in the summaries, is whole in the access view.
    const access = await runCli(["plan", "--view", "access"], { cwd: ws.dir, emulator: ws.emu });
    expectExit(access, 0);
    for (const v of [SERVER_TITLE, SERVER_DESC, STACK_TITLE, STACK_DESC])
      expect(access.stdout).toContain(JSON.stringify(v));
  });
});

describe("Markdown of a plan with a secret holding Markdown's punctuation", { timeout: 60_000 }, () => {
  it("the secret appears neither as it is nor escaped (it is redacted before it is escaped)", async () => {
    const secret = "tok_en:*1`x`";
    const stack = `${stackHead("secret").replace("resources:\n", "")}config:
  token: { type: string, secret: true }
resources:
  titled:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: weekly
      role: roles/gkebackup.admin
      members: [user:bob@example.com]
      condition:
        title: t-\${token}
        expression: '${EXPR2}'
`;
    await writeFile(join(ws.dir, "secret.yaml"), stack);
    const r = await runCli(
      [
        "plan",
        "-f",
        "secret.yaml",
        "--state",
        join(ws.dir, "state", "s.json"),
        "--format",
        "markdown",
        "--var",
        `token=${secret}`,
      ],
      { cwd: ws.dir, emulator: ws.emu },
    );
    expectExit(r, 0);
    expect(r.stdout).toContain("### Access changes");
    expect(r.stdout).not.toContain("tok");
  });
});
