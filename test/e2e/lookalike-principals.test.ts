// Issue 47, item 2: a member with a Cyrillic lookalike letter and a domain member with a
// mixed-script domain are flagged, their code points spelled out, in the text plan, the approval
// prompt, the Markdown and the plan JSON, and the lookalike-principal lint rule warns about them.
// Through the built CLI against the emulator. Needs `npm run build`.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import type { AccessDelta, EmulatorWorld, UiAccessSummary } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { PROMPT, rp, runInPty, stackHead, uiEvents } from "./apply-helpers.js";
import { expectExit, runCli, useStackWorkspace } from "./helpers.js";

const FAKE_ALICE = "user:\u0430lice@example.com";
/** domain:exаmple.com (Cyrillic а) in punycode, as Google takes a domain. */
const FAKE_DOMAIN = "domain:xn--exmple-4nf.com";
const DOMAIN_READS = 'punycode that reads "domain:ex\u0430mple.com"';
const MIXED = "mixed scripts (Cyrillic, Latin)";
const ALICE_WHY = `characters beyond ASCII; ${MIXED}; confusable with user:alice@example.com`;
const DOMAIN_WHY = `${DOMAIN_READS}; ${MIXED}; confusable with domain:example.com`;
const A = "U+0430 CYRILLIC SMALL LETTER A";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: {
        bindings: [
          {
            role: "roles/gkebackup.admin",
            members: ["user:alice@example.com", "domain:example.com", "user:bobl@example.com"],
          },
        ],
      },
    },
  ],
};

const STACK = `${stackHead("lookalike")}  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: ["${FAKE_ALICE}", "${FAKE_DOMAIN}", "user:bob@example.com"]
`;

const ws = useStackWorkspace(SEED, "converge-lookalike-", STACK, "lookalike.json");
/** What a reader sees of rendered HTML: tags dropped, entities decoded. */
const visible = (html: string) =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
const run = (args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu });

describe("principals that look like others", { timeout: 90_000 }, () => {
  it("plan --json lists both, with reasons, code points and the principal the fake one looks like", async () => {
    const r = await run(["plan", "--json"]);
    expectExit(r, 0);
    const out = JSON.parse(r.stdout) as { converge: { access_changes: AccessDelta } };
    expect(validate("terraform-plan.schema.json", out)).toEqual([]);
    const found = [...(out.converge.access_changes.lookalikes ?? [])].sort((a, b) =>
      a.principal.localeCompare(b.principal),
    );
    expect(found).toEqual([
      {
        principal: FAKE_DOMAIN,
        reasons: [DOMAIN_READS, "mixed scripts (Cyrillic, Latin)"],
        code_points: [A],
        looks_like: ["domain:example.com"],
      },
      {
        principal: FAKE_ALICE,
        reasons: ["characters beyond ASCII", "mixed scripts (Cyrillic, Latin)"],
        code_points: [A],
        looks_like: ["user:alice@example.com"],
      },
    ]);
  });

  it("the machine-readable UI stream's access_summary carries them too", async () => {
    const r = await run(["plan", "--json-stream"]);
    expectExit(r, 0);
    const summary = uiEvents(r.stdout).find((e) => e.type === "access_summary") as UiAccessSummary | undefined;
    expect(summary?.access.lookalikes?.map((l) => l.principal).sort()).toEqual([FAKE_DOMAIN, FAKE_ALICE]);
  });

  it("the text plan flags both where they gain access and spells them out; lint warns about each", async () => {
    const r = await run(["plan"]);
    expectExit(r, 0);
    expect(r.stdout).toContain(`+ ${FAKE_ALICE} (lookalike) gains roles/gkebackup.viewer`);
    expect(r.stdout).toContain(`+ ${FAKE_DOMAIN} (lookalike) gains roles/gkebackup.viewer`);
    expect(r.stdout).toContain(`! ${FAKE_ALICE} looks like another principal (${ALICE_WHY}): ${A}`);
    expect(r.stdout).toContain(`! ${FAKE_DOMAIN} looks like another principal (${DOMAIN_WHY}): ${A}`);
    expect(r.stdout).not.toContain("user:bob@example.com (lookalike)");
    // In the resource's block too, under the members its diff lists.
    expect(r.stdout).toContain(
      `      ! ${JSON.stringify(FAKE_ALICE)}  # looks like another principal (characters beyond ASCII;`,
    );
    expect(r.stdout).toContain(
      `      ! ${JSON.stringify(FAKE_DOMAIN)}  # looks like another principal (${DOMAIN_READS};`,
    );
    expect(r.stderr).toContain(`viewers: ${FAKE_ALICE} may look like another principal`);
    expect(r.stderr).toContain(`viewers: ${FAKE_DOMAIN} may look like another principal`);
    expect(r.stderr).toContain("[lint: lookalike-principal]");
    const access = await run(["plan", "--view", "access"]);
    expect(access.stdout).toContain(`${FAKE_ALICE} (lookalike)`);
    expect(access.stdout).toContain(`! ${FAKE_DOMAIN} looks like another principal`);
  });

  it("the Markdown marks both in the access table and lists them spelled out", async () => {
    const r = await run(["plan", "--format", "markdown"]);
    expectExit(r, 0);
    expect(r.stdout).toContain(`| ➕ grant | \`${FAKE_ALICE}\` ⚠️ lookalike |`);
    expect(r.stdout).toContain(`| ➕ grant | \`${FAKE_DOMAIN}\` ⚠️ lookalike |`);
    const list = (marked.lexer(r.stdout).find((t) => t.type === "list") as Tokens.List).items.map((i) =>
      visible(marked.parseInline(i.text) as string),
    );
    expect(list).toEqual([
      `⚠️ ${FAKE_DOMAIN} looks like another principal (${DOMAIN_WHY}): ${A}`,
      `⚠️ ${FAKE_ALICE} looks like another principal (${ALICE_WHY}): ${A}`,
    ]);
  });

  it("an ASCII member confusable with one of the policy (1 and l): flagged, linted at its position", async () => {
    await writeFile(
      join(ws.dir, "confusable.yaml"),
      STACK.replace(/members: \[.*\]/, 'members: ["user:bob1@example.com"]'),
    );
    const args = ["plan", "-f", "confusable.yaml", "--state", join(ws.dir, "state", "confusable.json")];
    const r = await run(args);
    expectExit(r, 0);
    expect(r.stdout).toContain("+ user:bob1@example.com (lookalike) gains");
    expect(r.stdout).toContain(
      "! user:bob1@example.com looks like another principal (confusable with user:bobl@example.com)",
    );
    expect(r.stderr).toContain(
      "confusable.yaml:11:17: Warning: viewers: user:bob1@example.com looks like user:bobl@example.com",
    );
    expect(r.stderr).toContain("[lint: lookalike-principal]");
    expectExit(await run([...args, "--strict"]), 1);
  });

  it.skipIf(!existsSync("/usr/bin/script"))(
    "the approval prompt shows both flagged right above the question",
    async () => {
      const pty = runInPty(["apply", "--state", ws.statePath], { cwd: ws.dir, emulator: ws.emu });
      try {
        await pty.waitFor(PROMPT);
        await pty.waitFor("Enter a value");
        const text = pty.text();
        // The prompt: the question, then the access summary (lines wrapped to the terminal), then the field.
        const prompt = text.slice(text.lastIndexOf(PROMPT), text.lastIndexOf("Enter a value"));
        const summary = prompt.slice(prompt.indexOf("Access: ")).replace(/\n/g, " ");
        expect(summary).toContain(`${FAKE_ALICE} (lookalike) gains`);
        expect(summary).toContain(`${FAKE_ALICE} looks like another principal`);
        expect(summary).toContain(`${FAKE_DOMAIN} looks like another principal`);
        expect(summary).toContain(A);
        await pty.answer("no");
        expect(await pty.exit).toBe(1);
      } finally {
        pty.kill();
      }
    },
  );
});
