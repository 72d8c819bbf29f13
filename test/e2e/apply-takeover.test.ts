// Issue 11, item 1: a revoke (a delete, or the old half of a replacement) never removes a grant
// that another change of the same plan creates or keeps. Each shape applies a first stack, then a
// second one that moves grants around; afterwards every live policy equals the stack and the next
// plan says "No changes.".
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";
import { bindingYaml, ep, memberYaml, membersOf, policyIn, rp, stackHead } from "./apply-helpers.js";

const VIEWER = "roles/gkebackup.viewer";
const ADMIN = "roles/gkebackup.admin";
const USER = "roles/aiplatform.user";
const ALICE = "user:alice@example.com";
const BOB = "user:bob@example.com";
const CAROL = "user:carol@example.com";
const DANA = "user:dana@example.com";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["x1", "y1", "x2", "y2", "x3"].map((id) => ({ name: rp(id), policy: { bindings: [] } })),
  endpoints: ["e1", "e2"].map((id) => ({ name: ep(id), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-takeover-");

type Expected = { object: string; role: string; members: string[] }[];

/** Applies `first`, then `second`; checks the live policies and that the next plan is empty. */
async function moveGrants(stack: string, first: string, second: string, expected: Expected): Promise<void> {
  const stackFile = join(ws.dir, `${stack}.yaml`);
  const cli = (...args: string[]) =>
    runCli([...args, "-f", stackFile, "--state", join(ws.dir, `${stack}.json`)], { cwd: ws.dir, emulator: ws.emu });
  await writeFile(stackFile, stackHead(stack) + first);
  expectExit(await cli("apply", "--auto-approve"), 0);
  await writeFile(stackFile, stackHead(stack) + second);
  const applied = await cli("apply", "--auto-approve");
  expectExit(applied, 0);
  expect(applied.stdout).toContain("Apply complete!");
  const w = await world(ws.emu);
  for (const e of expected)
    expect(membersOf(policyIn(w, e.object), e.role), `${e.role} on ${e.object}`).toEqual(e.members);
  const next = await cli("plan", "--detailed-exitcode");
  expectExit(next, 0);
  expect(next.stdout).toContain("No changes.");
}

describe("a revoke never removes a grant another change of the plan creates", () => {
  it("a binding moves to another restore plan while a new binding takes its role on the old one", async () => {
    await moveGrants(
      "move",
      bindingYaml("a", "x1", VIEWER, [ALICE]),
      bindingYaml("a", "y1", VIEWER, [ALICE]) + bindingYaml("c", "x1", VIEWER, [CAROL]),
      [
        { object: rp("x1"), role: VIEWER, members: [CAROL] },
        { object: rp("y1"), role: VIEWER, members: [ALICE] },
      ],
    );
  });

  it("two bindings swap restore plans", async () => {
    await moveGrants(
      "swap",
      bindingYaml("a", "x2", VIEWER, [ALICE]) + bindingYaml("b", "y2", VIEWER, [BOB]),
      bindingYaml("a", "y2", VIEWER, [ALICE]) + bindingYaml("b", "x2", VIEWER, [BOB]),
      [
        { object: rp("x2"), role: VIEWER, members: [BOB] },
        { object: rp("y2"), role: VIEWER, members: [ALICE] },
      ],
    );
  });

  it("a binding changes role (a replacement) while a new binding, ordered first, takes its old role", async () => {
    await moveGrants(
      "role",
      bindingYaml("a", "x3", VIEWER, [ALICE]),
      bindingYaml("c", "x3", VIEWER, [CAROL]) +
        bindingYaml("a", "x3", ADMIN, [ALICE], "    options:\n      dependsOn: [c]\n"),
      [
        { object: rp("x3"), role: VIEWER, members: [CAROL] },
        { object: rp("x3"), role: ADMIN, members: [ALICE] },
      ],
    );
  });

  it("a member moves to another endpoint while a new member resource adds the same member on the old one", async () => {
    await moveGrants(
      "member",
      memberYaml("m", "e1", USER, DANA),
      memberYaml("m", "e2", USER, DANA) + memberYaml("n", "e1", USER, DANA),
      [
        { object: ep("e1"), role: USER, members: [DANA] },
        { object: ep("e2"), role: USER, members: [DANA] },
      ],
    );
  });
});
