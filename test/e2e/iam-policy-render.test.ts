// Issue 16, item 5: the plan, the access view, the Markdown output and `plan --json` show every
// binding and member a whole-policy resource adds or removes, for a create over a policy holding
// foreign grants and for an update in place. Built CLI against a seeded emulator.
import { describe, expect, it } from "vitest";
import type { AccessChange } from "../../src/generated/schemas.js";
import { useEmulatorWorkspace } from "./helpers.js";
import {
  ALICE,
  BOB,
  CAROL,
  DAN,
  ERIN,
  RESTORE_PLAN as K,
  UNTIL_2027,
  familySeed,
  stackRunner,
} from "./iam-family-helpers.js";

const ws = useEmulatorWorkspace(familySeed(["nightly"]), "converge-iam-policy-render-");
const NAME = K.full("nightly");

type Grant = { who: string; role: string; condition?: string; action: "grant" | "revoke" };

interface TfChange {
  address: string;
  change: {
    actions: string[];
    before: { bindings?: { role: string; members: string[] }[] } | null;
    after: { bindings?: { role: string; members: string[] }[] };
  };
}

/** Every (member, role) of a list of bindings, as "member role". */
const pairs = (bindings: { role: string; members: string[] }[] | undefined) =>
  (bindings ?? []).flatMap((b) => b.members.map((m) => `${m} ${b.role}`)).sort();

async function expectRendered(s: ReturnType<typeof stackRunner>, grants: Grant[]): Promise<void> {
  const granted = grants.filter((g) => g.action === "grant");
  const revoked = grants.filter((g) => g.action === "revoke");
  const role = (g: Grant) => `${g.role}${g.condition ? ` if "${g.condition}"` : ""}`;

  // The plan: each added member in the bindings diff, each removed one in the block or its diff,
  // and each revoke in the access summary with its counts.
  const text = (await s.planChanges()).stdout;
  for (const g of granted) expect(text).toMatch(new RegExp(`\\+ "${g.who}",`));
  // Once each: a member the bindings diff removes is not listed again as a revocation line.
  for (const g of revoked) expect(text.match(new RegExp(`^ *- "${g.who}"`, "gm")), g.who).toHaveLength(1);
  expect(text).toContain(`Access: ${granted.length} granted, ${revoked.length} revoked`);
  for (const g of revoked) expect(text).toContain(`- ${g.who} loses ${role(g)} on ${NAME} (pol)`);

  // The access view: one line per grant and revoke, attributed to the policy resource.
  const access = (await s.planChanges("--view", "access")).stdout;
  expect(access).toContain(`Access changes (${granted.length} granted, ${revoked.length} revoked):`);
  for (const g of grants)
    expect(access).toMatch(
      new RegExp(`\\${g.action === "grant" ? "+" : "-"} ${g.who} +${g.role.replace(/\./g, "\\.")}.*\\(pol\\)`),
    );

  // Markdown: one table row per grant and revoke.
  const md = (await s.planChanges("--format", "markdown")).stdout;
  for (const g of grants)
    expect(md).toMatch(
      new RegExp(
        `\\| ${g.action === "grant" ? "➕ grant" : "➖ revoke"} \\| \`${g.who}` +
          `\` \\| \`${g.role}\` \\|[^\\n]*\\| \`pol\` \\|`,
      ),
    );

  // plan --json: the access delta lists each, and the Terraform change's after holds the bindings.
  const json = JSON.parse((await s.planChanges("--json")).stdout) as {
    resource_changes: TfChange[];
    converge: { access_changes: { changes: AccessChange[] } };
  };
  const delta = json.converge.access_changes.changes
    .map((c) => `${c.action} ${c.principal} ${c.role}${c.condition ? ` ${c.condition.title}` : ""}`)
    .sort();
  expect(delta).toEqual(
    grants.map((g) => `${g.action} ${g.who} ${g.role}${g.condition ? ` ${g.condition}` : ""}`).sort(),
  );
  const [pol] = json.resource_changes.filter((c) => c.address === "pol");
  for (const g of granted) expect(pairs(pol!.change.after.bindings)).toContain(`${g.who} ${g.role}`);
  for (const g of revoked) expect(pairs(pol!.change.after.bindings)).not.toContain(`${g.who} ${g.role}`);
}

describe("a whole-policy resource's changes in every view", { timeout: 120_000 }, () => {
  it("create over foreign grants, then update in place: every added and removed member is shown", async () => {
    const s = stackRunner(ws, "render");
    await s.write({
      pol: {
        type: K.policyT,
        properties: {
          name: "nightly",
          bindings: [
            { role: K.r1, members: [ALICE, CAROL] },
            { role: K.r2, members: [ERIN], condition: UNTIL_2027 },
          ],
        },
      },
    });
    await expectRendered(s, [
      { who: ALICE, role: K.r1, action: "grant" },
      { who: ERIN, role: K.r2, condition: UNTIL_2027.title, action: "grant" },
      { who: DAN, role: K.r2, action: "revoke" },
    ]);
    await s.apply();

    await s.write({
      pol: { type: K.policyT, properties: { name: "nightly", bindings: [{ role: K.r2, members: [BOB] }] } },
    });
    await expectRendered(s, [
      { who: BOB, role: K.r2, action: "grant" },
      { who: ALICE, role: K.r1, action: "revoke" },
      { who: CAROL, role: K.r1, action: "revoke" },
      { who: ERIN, role: K.r2, condition: UNTIL_2027.title, action: "revoke" },
    ]);
    // The Terraform change of the update holds the removed members in `before`.
    const json = JSON.parse((await s.planChanges("--json")).stdout) as { resource_changes: TfChange[] };
    const pol = json.resource_changes.find((c) => c.address === "pol")!;
    expect(pol.change.actions).toEqual(["update"]);
    expect(pairs(pol.change.before!.bindings)).toEqual(
      [`${ALICE} ${K.r1}`, `${CAROL} ${K.r1}`, `${ERIN} ${K.r2}`].sort(),
    );
    expect(pairs(pol.change.after.bindings)).toEqual([`${BOB} ${K.r2}`]);
    await s.apply();
    await s.expectNoChanges();
  });
});
