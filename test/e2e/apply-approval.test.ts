// Issue 4, acceptance 2: the approval prompt, driven through a real pseudo-terminal (util-linux
// `script`): "no" cancels and writes nothing, "details" shows the whole plan and asks again,
// "yes" applies. Without a terminal and without --auto-approve nothing is applied.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, resetStats, runCli, stats, useEmulatorWorkspace } from "./helpers.js";
import {
  bindingYaml,
  count,
  ep,
  M,
  memberYaml,
  membersOf,
  PROMPT,
  readStateFile,
  rp,
  runInPty,
  setCalls,
  stackHead,
  type PtySession,
} from "./apply-helpers.js";

const HAS_SCRIPT = existsSync("/usr/bin/script");

const STACK =
  stackHead("approval") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com", "group:sre@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "user:bob@example.com");

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: { bindings: [{ role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] }] },
    },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-approval-");
let stackFile: string;
let n = 0;
const freshState = () => join(ws.dir, `state-${++n}.json`);

beforeAll(async () => {
  stackFile = join(ws.dir, "stack.yaml");
  await writeFile(stackFile, STACK);
});

beforeEach(async () => {
  await resetStats(ws.emu);
});

/** `converge apply -f file --state state` in a pseudo-terminal, against the emulator. */
const applyInPty = (file: string, state: string, env?: Record<string, string>): PtySession =>
  runInPty(["apply", "-f", file, "--state", state], { cwd: ws.dir, emulator: ws.emu, env });

/** Answers "no": exit 1, and "cancelled" printed at or after `from`. */
async function cancel(pty: PtySession, from = 0): Promise<void> {
  await pty.answer("no");
  const code = await pty.exit;
  expect(code, pty.text()).toBe(1);
  expect(pty.text().slice(from)).toMatch(/cancelled/i);
}

/** Nothing was applied: no setIamPolicy call since the test began, and no state file. */
async function expectNothingApplied(state: string): Promise<void> {
  expect(setCalls(await stats(ws.emu))).toBe(0);
  expect(existsSync(state)).toBe(false);
}

// First: the "yes" case below makes live match the stack.
describe("approval without a terminal", () => {
  it("stdin is not a TTY and no --auto-approve: exit 1, names --auto-approve, writes nothing", async () => {
    const state = freshState();
    // runCli's child has stdin "ignore" and piped stdout: no terminal at all.
    const r = await runCli(["apply", "-f", stackFile, "--state", state], { cwd: ws.dir, emulator: ws.emu });
    expectExit(r, 1);
    expect(r.stderr).toContain("--auto-approve");
    await expectNothingApplied(state);
  });
});

describe.skipIf(!HAS_SCRIPT)("approval prompt in a terminal", () => {
  it('"no" cancels: exit 1, "cancelled", no setIamPolicy, no state', async () => {
    const state = freshState();
    const pty = applyInPty(stackFile, state);
    try {
      await pty.waitFor(PROMPT);
      await cancel(pty);
    } finally {
      pty.kill();
    }
    await expectNothingApplied(state);
    expect(membersOf(await livePolicy(ws.emu, rp("nightly")), "roles/gkebackup.viewer")).toEqual([]);
  });

  it('"details" shows each policy the apply writes, before and after, and asks again; then "no" cancels', async () => {
    const state = freshState();
    const pty = applyInPty(stackFile, state);
    try {
      const firstPrompt = await pty.waitFor(PROMPT);
      const planShown = pty.text().slice(0, firstPrompt);
      expect(planShown).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
      await pty.answer("details");
      // Every policy the apply writes, before and after (issue 13), then the question again.
      const shown = await pty.waitFor("Policies this apply writes (before → after):", firstPrompt);
      const again = await pty.waitFor(PROMPT, shown);
      const details = pty.text().slice(shown, again);
      expect(details).toMatch(
        new RegExp(
          String.raw`restore plan projects\/my-project\/locations\/us-central1\/restorePlans\/nightly\n\s+rol` +
            String.raw`es\/gkebackup\.viewer\n\s+\+ group:sre@example\.com\n\s+\+ user:alice@example\.com`,
        ),
      );
      expect(details).toMatch(
        new RegExp(
          String.raw`endpoint projects\/my-project\/locations\/us-central1\/endpoints\/churn\n\s+roles\/aipla` +
            String.raw`tform\.user\n\s+\+ user:bob@example\.com`,
        ),
      );
      expect(details).not.toContain("backupAdmin"); // an unchanged binding is not shown
      await cancel(pty, again);
    } finally {
      pty.kill();
    }
    await expectNothingApplied(state);
  });

  it("with CI set in the environment the question is still visible before the answer (ink would hide it)", async () => {
    const state = freshState();
    const pty = applyInPty(stackFile, state, { CI: "true" });
    try {
      const asked = await pty.waitFor("Enter a value:");
      expect(pty.text().slice(0, asked)).toContain(PROMPT);
      expect(pty.text().slice(0, asked)).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
      await cancel(pty, asked);
    } finally {
      pty.kill();
    }
    await expectNothingApplied(state);
  });

  it('with CI set, "yes" applies and the progress is streamed as lines (no live view to hide it)', async () => {
    // Its own role on the restore plan, so the "yes" case below still finds everything to do.
    const ciStack = join(ws.dir, "ci-stack.yaml");
    await writeFile(
      ciStack,
      stackHead("approval-ci") +
        bindingYaml("auditors", "nightly", "roles/gkebackup.delegatedRestoreViewer", ["user:carol@example.com"]),
    );
    const state = freshState();
    const pty = applyInPty(ciStack, state, { CI: "true" });
    try {
      const asked = await pty.waitFor("Enter a value:");
      await pty.answer("yes");
      const code = await pty.exit;
      expect(code, pty.text()).toBe(0);
      const after = pty.text().slice(asked);
      expect(after).toMatch(/^auditors: Creating\.\.\.$/m);
      expect(after).toMatch(/^auditors: Creation complete after \d+\.\ds$/m);
      expect(after).toContain("Apply complete! Resources: 1 added, 0 changed, 0 destroyed.");
    } finally {
      pty.kill();
    }
    expect(count(await stats(ws.emu), M.rpSet)).toBe(1);
    expect(membersOf(await livePolicy(ws.emu, rp("nightly")), "roles/gkebackup.delegatedRestoreViewer")).toEqual([
      "user:carol@example.com",
    ]);
  });

  it('"yes" applies: setIamPolicy calls happen and the state is written', async () => {
    const state = freshState();
    const pty = applyInPty(stackFile, state);
    try {
      await pty.waitFor(PROMPT);
      await pty.answer("yes");
      const code = await pty.exit;
      expect(code, pty.text()).toBe(0);
      expect(pty.text()).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    } finally {
      pty.kill();
    }
    const s = await stats(ws.emu);
    expect(count(s, M.rpSet)).toBe(1);
    expect(count(s, M.epSet)).toBe(1);
    expect((await readStateFile(state)).resources.map((r) => r.address).sort()).toEqual(["invoker", "viewers"]);
    expect(membersOf(await livePolicy(ws.emu, rp("nightly")), "roles/gkebackup.viewer")).toEqual([
      "group:sre@example.com",
      "user:alice@example.com",
    ]);
    expect(membersOf(await livePolicy(ws.emu, rp("nightly")), "roles/gkebackup.backupAdmin")).toEqual([
      "group:platform@example.com",
    ]);
  });
});
