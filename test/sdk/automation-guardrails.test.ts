// The Automation API passes guardrail approvals as the CLI does (`--approve RULE` with
// CONVERGE_ACTOR): an owner-approval rule refuses up() and apply(plan) before any write until one
// of its approvers approves it, and a rules file is given as --policy is (policyFiles).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { Stack } from "../../src/automation/automation.js";
import { RestorePlanIamMember } from "../../src/sdk/resources.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import type { Program } from "../../src/sdk/program.js";
import { displayAction } from "../../src/contracts/actions.js";

const SEED = new URL("../../examples/quickstart/cloud.seed.yaml", import.meta.url).pathname;
let emu: RunningEmulator;
let dir: string;
let rules: string;
beforeAll(async () => {
  emu = await startEmulator({ seedFile: SEED });
  dir = await mkdtemp(join(tmpdir(), "converge-sdk-guard-"));
  rules = join(dir, "rules.yaml");
  const rule = {
    id: "lead-ok",
    description: "grants need the lead",
    enforcement: "owner-approval",
    approvers: ["lead"],
    condition: "change == 'grant'",
  };
  await writeFile(rules, stringify({ rules: [rule] }));
});

afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const grant =
  (name: string, member: string): Program =>
  (s) => {
    s.provider = { project: "my-project", location: "us-central1", endpoint: emu.url };
    new RestorePlanIamMember(name, { name: "nightly", role: "roles/gkebackup.viewer", member });
  };

const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(UserError);
  return (e as UserError).diagnostics.map((d) => d.summary).join("\n");
};

describe("Automation API guardrail approvals", () => {
  it("up() needs approveRules from an approver, as --approve with CONVERGE_ACTOR", async () => {
    const stack = await Stack.inline("sdk-guard-up", grant("g", "user:ana@example.com"), { dir, policyFiles: [rules] });
    expect(await refusal(stack.up())).toContain("guardrail lead-ok needs an owner's approval");
    expect(await refusal(stack.up({ approveRules: ["lead-ok"], actor: "intern" }))).toContain(
      '"intern" is not an approver of guardrail lead-ok',
    );
    // Nothing was written: the grant is still to be made.
    expect((await stack.plan()).resource_changes.map((c) => displayAction(c))).toEqual(["create"]);
    const done = await stack.up({ approveRules: ["lead-ok"], actor: "lead" });
    expect(done.failed).toEqual([]);
    expect(done.state.resources.map((r) => r.address)).toEqual(["g"]);
  });

  it("apply(plan) re-checks the rules and takes the approval with the apply", async () => {
    const stack = await Stack.inline("sdk-guard-apply", grant("h", "user:bo@example.com"), {
      dir,
      policyFiles: [rules],
    });
    const plan = await stack.plan();
    expect(plan.guardrails?.results.map((r) => r.rule)).toEqual(["lead-ok"]);
    expect(await refusal(stack.apply(plan))).toContain("guardrail lead-ok needs an owner's approval");
    const again = await stack.plan();
    const done = await stack.apply(again, { approveRules: ["lead-ok"], actor: "lead" });
    expect(done.failed).toEqual([]);
    expect(done.state.resources.map((r) => r.address)).toEqual(["h"]);
  });
});
