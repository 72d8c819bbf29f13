// Issue 13, items 1–3: every grant that appears or disappears is in the default plan and where the
// decision is made. The quickstart's apply revokes carol (granted outside converge): her name is in
// the binding's block, in the access summary under the plan (text and Markdown) and directly above
// "Enter a value:"; a public principal is there too; 'details' shows each written policy before and
// after.
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, REPO, runCli, useEmulatorWorkspace } from "./helpers.js";
import { ep, memberYaml, runInPty, stackHead } from "./apply-helpers.js";

const CAROL_INLINE = '- "user:carol@example.com"  # granted outside converge, will be revoked';
const CAROL_SUMMARY =
  "- user:carol@example.com loses roles/gkebackup.viewer on " +
  "projects/my-project/locations/us-central1/restorePlans/nightly (restoreViewers)";

let quickstart: string;
beforeAll(async () => {
  quickstart = await mkdtemp(join(tmpdir(), "converge-review-access-"));
  await cp(join(REPO, "examples", "quickstart"), quickstart, {
    recursive: true,
    filter: (src) => !src.includes(`${join("quickstart", "state")}`),
  });
});
afterAll(async () => {
  await rm(quickstart, { recursive: true, force: true });
});

describe("the quickstart's plan names carol as revoked", () => {
  it("in the binding's block and in the access summary (text)", async () => {
    const r = await runCli(["plan"], { cwd: quickstart });
    expectExit(r, 0);
    // The plan's first line says where the calls went (item 5).
    expect(r.stdout).toMatch(/Target: embedded emulator\n\nRefreshed 2 IAM policies\.\n/);
    expect(r.stdout).toMatch(
      /# restoreViewers will be created[^#]*- "user:carol@example\.com" {2}# granted outside converge, will be revoked/,
    );
    const summary = r.stdout.slice(r.stdout.indexOf("Access: "));
    expect(summary.split("\n")[0]).toBe("Access: 4 granted, 1 revoked");
    expect(summary).toContain(CAROL_SUMMARY);
  });

  it("in Markdown", async () => {
    const r = await runCli(["plan", "--format", "markdown"], { cwd: quickstart });
    expectExit(r, 0);
    expect(r.stdout).toContain(CAROL_INLINE);
    expect(r.stdout).toContain("Access: 4 granted, 1 revoked");
  });

  it("directly above the prompt, and 'details' shows the policies before and after", async () => {
    const pty = runInPty(["apply"], { cwd: quickstart });
    const at = await pty.waitFor("Enter a value:");
    const above = pty.text().slice(pty.text().lastIndexOf("Do you want to perform these actions?"), at);
    expect(above).toContain("Access: 4 granted, 1 revoked");
    expect(above).toContain(CAROL_SUMMARY);
    await pty.answer("details");
    const shown = await pty.waitFor("Policies this apply writes (before → after):", at);
    const again = await pty.waitFor("Enter a value:", shown);
    const details = pty.text().slice(shown, again);
    expect(details).toMatch(
      new RegExp(
        String.raw`restore plan projects\/my-project\/locations\/us-central1\/restorePlans\/nightly\n\s+roles` +
          String.raw`\/gkebackup\.admin if "until-2027"\n\s+\+ user:oncall@example\.com`,
      ),
    );
    expect(details).toMatch(
      new RegExp(
        String.raw`roles\/gkebackup\.viewer\n\s+- user:carol@example\.com\n\s+\+ group:sre@example\.com\n\s+` +
          String.raw`\+ user:alice@example\.com`,
      ),
    );
    expect(details).not.toContain("roles/gkebackup.backupAdmin"); // unchanged bindings are not shown
    await pty.answer("no");
    expect(await pty.exit).toBe(1);
  });
});

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-review-public-");

describe("a public grant", () => {
  it("is named in the summary directly above the prompt", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    await writeFile(stackFile, stackHead("public") + memberYaml("open", "churn", "roles/aiplatform.user", "allUsers"));
    const pty = runInPty(["apply", "-f", stackFile, "--state", join(ws.dir, "public.json")], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    const at = await pty.waitFor("Enter a value:");
    const above = pty.text().slice(pty.text().lastIndexOf("Do you want to perform these actions?"), at);
    expect(above).toContain("Access: 1 granted, 0 revoked");
    expect(above).toContain(
      "! allUsers (public) gains roles/aiplatform.user on " +
        "projects/my-project/locations/us-central1/endpoints/churn (open)",
    );
    expect(above).toMatch(/! 1 lint warning/);
    expect(pty.text()).toContain(`Target: emulator at 127.0.0.1:${ws.emu.port} (from CLOUDNATIVE_EMULATOR_HOST)`);
    await pty.answer("no");
    expect(await pty.exit).toBe(1);
  });
});
