// Guardrails (issue 41) through the built CLI against a seeded emulator: rules in CEL over the
// plan's access changes refuse a plan before any write (mandatory), need an owner's --approve
// (owner-approval) or are listed (advisory); a saved plan is refused when its rules changed.
// Needs `npm run build`.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, runCli, stats, useEmulatorWorkspace } from "./helpers.js";
import { ALICE, CAROL, DAN, RESTORE_PLAN as K, foreignPolicy, liveView, stackRunner } from "./iam-family-helpers.js";
import { rp } from "./apply-helpers.js";
import { writeRules } from "./guardrail-helpers.js";

const IDS = ["dom", "priv", "prot", "sod", "whole", "owner", "changed", "views"];
const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: IDS.map((id) => ({ name: rp(id), policy: foreignPolicy(K) })),
  },
  "converge-guardrails-",
);

const OUTSIDER = "user:eve@outside.test";

const rules = (name: string, doc: unknown) => writeRules(ws, name, doc);

/** How many setIamPolicy calls the emulator has had. */
const setCalls = async () =>
  Object.entries((await stats(ws.emu)).requests).reduce((n, [k, v]) => n + (k.includes("setIamPolicy") ? v : 0), 0);

/** A member resource granting `member` `role` on restore plan `id`. */
const member = (id: string, role: string, m: string, extra: Record<string, unknown> = {}) => ({
  g: { type: K.memberT, properties: { name: id, role, member: m, ...extra } },
});

/** The stack applied with `rulesDoc` mandatory: refused before any write; advisory: applied and listed. */
async function refusedThenAdvisory(
  id: string,
  resources: Parameters<ReturnType<typeof stackRunner>["write"]>[0],
  rule: string,
  doc: (level: string) => unknown,
) {
  const s = stackRunner(ws, id);
  await s.write(resources);
  const before = await liveView(ws.emu, rp(id));
  const writes = await setCalls();
  const refused = await s.cli("apply", "--auto-approve", "--policy", await rules(id, doc("mandatory")));
  expectExit(refused, 1);
  expect(refused.stderr).toContain(`guardrail ${rule} (mandatory) refuses 1 access change`);
  expect(refused.stdout).toContain(`${rule} (mandatory):`);
  expect(await liveView(ws.emu, rp(id))).toEqual(before);
  expect(await setCalls()).toBe(writes);
  const advisory = await s.cli("apply", "--auto-approve", "--policy", await rules(id, doc("advisory")));
  expectExit(advisory, 0);
  expect(advisory.stdout).toContain(`${rule} (advisory):`);
  return advisory;
}

describe("guardrails", { timeout: 180_000 }, () => {
  it("refuses a grant to an outside domain's user (mandatory), applies and lists it (advisory)", async () => {
    const r = await refusedThenAdvisory("dom", member("dom", K.r1, OUTSIDER), "allowed-domains", (enforcement) => ({
      builtins: { "allowed-domains": { enforcement, domains: ["example.com"] } },
    }));
    expect(r.stdout).toContain(`grant of ${K.r1} to ${OUTSIDER} on ${rp("dom")} (g)`);
  });

  it("refuses a privileged role without an expiring condition", async () => {
    await refusedThenAdvisory("priv", member("priv", K.r2, ALICE), "privileged-expiry", (enforcement) => ({
      builtins: { "privileged-expiry": { enforcement, roles: [K.r2], max_days: 30 } },
    }));
  });

  it("refuses the revocation of a protected principal", async () => {
    const binding = { b: { type: K.bindingT, properties: { name: "prot", role: K.r1, members: [ALICE] } } };
    const r = await refusedThenAdvisory("prot", binding, "protected-principals", (enforcement) => ({
      builtins: { "protected-principals": { enforcement, principals: [CAROL] } },
    }));
    expect(r.stdout).toContain(`revoke of ${K.r1} to ${CAROL}`);
  });

  it("refuses a separation-of-duties pair made with a grant already on the policy", async () => {
    // dan holds r2 outside converge; the stack grants dan r1.
    await refusedThenAdvisory("sod", member("sod", K.r1, DAN), "separation-of-duties", (enforcement) => ({
      builtins: { "separation-of-duties": { enforcement, pairs: [[K.r1, K.r2]] } },
    }));
  });

  it("a rule over the whole end-state policy sees a foreign grant the change joins", async () => {
    // carol holds r1 outside converge: alice's grant makes two holders of a role meant for one.
    const doc = (enforcement: string) => ({
      rules: [
        {
          id: "one-admin",
          description: "at most one principal holds the role",
          enforcement,
          condition: `change == 'grant' && role == '${K.r1}' && size(policy.roles[role]) > 1`,
        },
      ],
    });
    await refusedThenAdvisory("whole", member("whole", K.r1, ALICE), "one-admin", doc);
  });

  it("an owner-approval rule blocks apply FILE until an approver applies with --approve", async () => {
    const s = stackRunner(ws, "owner");
    await s.write(member("owner", K.r1, ALICE));
    const file = await rules("owner", {
      rules: [
        {
          id: "lead-ok",
          description: "grants need the lead",
          enforcement: "owner-approval",
          approvers: ["lead"],
          condition: "change == 'grant'",
        },
      ],
    });
    const planFile = join(ws.dir, "owner.plan");
    expectExit(await s.cli("plan", "--out", planFile, "--policy", file), 0);
    const missing = await s.cli("apply", planFile, "--policy", file);
    expectExit(missing, 1);
    expect(missing.stderr).toContain("guardrail lead-ok needs an owner's approval");
    const wrong = await runCli(
      ["apply", planFile, "--policy", file, "--approve", "lead-ok", "-f", s.file(), "--state", s.state()],
      { cwd: ws.dir, emulator: ws.emu, env: { CONVERGE_ACTOR: "intern" } },
    );
    expectExit(wrong, 1);
    expect(wrong.stderr).toContain('"intern" is not an approver of guardrail lead-ok');
    const ok = await runCli(
      ["apply", planFile, "--policy", file, "--approve", "lead-ok", "-f", s.file(), "--state", s.state()],
      { cwd: ws.dir, emulator: ws.emu, env: { CONVERGE_ACTOR: "lead" } },
    );
    expectExit(ok, 0);
    expect((await liveView(ws.emu, rp("owner"))).bindings.find((b) => b.role === K.r1)?.members).toContain(ALICE);
  });

  it("refuses a saved plan whose rules file changed since planning", async () => {
    const s = stackRunner(ws, "changed");
    await s.write(member("changed", K.r1, ALICE));
    const file = await rules("changed", {
      rules: [
        { id: "no-eve", description: "no eve", enforcement: "mandatory", condition: `member.id == '${OUTSIDER}'` },
      ],
    });
    const planFile = join(ws.dir, "changed.plan");
    expectExit(await s.cli("plan", "--out", planFile, "--policy", file), 0);
    await rules("changed", {
      rules: [
        { id: "no-eve", description: "no eve", enforcement: "advisory", condition: `member.id == '${OUTSIDER}'` },
      ],
    });
    const r = await s.cli("apply", planFile, "--policy", file);
    expectExit(r, 1);
    expect(r.stderr).toContain("was checked against other guardrail rules than those in force now");
  });

  it("a stack's policies: section is checked in every view: text, --view access, Markdown, plan JSON", async () => {
    const s = stackRunner(ws, "views");
    const rule = {
      id: "no-outsiders",
      description: "only example.com",
      enforcement: "advisory",
      condition: "member.domain != 'example.com'",
    };
    await s.write(member("views", K.r1, OUTSIDER), { policies: { rules: [rule], builtins: { "basic-role": "off" } } });
    const line = `no-outsiders (advisory): grant of ${K.r1} to ${OUTSIDER} on ${rp("views")} (g)`;
    expect((await s.planChanges()).stdout).toContain(line);
    expect((await s.planChanges("--view", "access")).stdout).toContain(line);
    const md = await s.planChanges("--format", "markdown");
    expect(md.stdout).toContain("### Guardrails");
    expect(md.stdout).toContain(`| \`no-outsiders\` | \`advisory\` | \`grant\` | \`${OUTSIDER}\` |`);
    const json = await s.cli("plan", "--json");
    expectExit(json, 0);
    const g = (JSON.parse(json.stdout) as { converge: { guardrails: { rules: { id: string }[]; results: unknown[] } } })
      .converge.guardrails;
    expect(g.rules.map((r) => r.id)).toContain("no-outsiders");
    expect(g.rules.map((r) => r.id)).not.toContain("basic-role");
    expect(g.results).toEqual([
      {
        rule: "no-outsiders",
        enforcement: "advisory",
        change: "grant",
        principal: OUTSIDER,
        role: K.r1,
        object: rp("views"),
        resource: "g",
      },
    ]);
  });

  it("a rule that does not type-check stops the command at load, positioned", async () => {
    const s = stackRunner(ws, "typed");
    await s.write(member("dom", K.r1, ALICE));
    const file = await rules("bad", {
      rules: [
        { id: "bad", description: "bad", enforcement: "mandatory", condition: "role + 1 == 2" },
        { id: "typo", description: "typo", enforcement: "advisory", condition: "membr.domain == 'x'" },
      ],
    });
    const r = await s.cli("plan", "--policy", file);
    expectExit(r, 1);
    expect(r.stderr).toMatch(/bad\.rules\.yaml:\d+:\d+/);
    expect(r.stderr).toContain("no matching overload");
    expect(r.stderr).toContain("unknown variable membr; did you mean member?");
    // validate checks a stack's policies: section too, at its line in the stack file.
    const v = stackRunner(ws, "invalid");
    const bad = { id: "x", description: "x", enforcement: "mandatory", condition: "role + 1 == 2" };
    await v.write(member("dom", K.r1, ALICE), { policies: { rules: [bad] } });
    const validated = await runCli(["validate", "-f", v.file()], { cwd: ws.dir });
    expectExit(validated, 1);
    expect(validated.stderr).toMatch(/invalid\.yaml:\d+:\d+/);
    expect(validated.stderr).toContain("rule x: found no matching overload");
  });
});
