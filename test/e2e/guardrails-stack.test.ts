// Guardrails (issue 41) through the built CLI against a seeded emulator, beyond one access change:
// `plan --format sarif`, separation of duties across the stack's policies, the lookalike-principal
// built-in, and `policy test` on a saved plan. Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { expectExit, runCli, stats, useEmulatorWorkspace } from "./helpers.js";
import { ALICE, BOB, RESTORE_PLAN as K, foreignPolicy, liveView, stackRunner } from "./iam-family-helpers.js";
import { rp } from "./apply-helpers.js";
import { expectValidSarif, writeRules } from "./guardrail-helpers.js";

const IDS = ["sarif", "sod-a", "look", "saved"];
// On sod-b alice holds r2, granted outside converge.
const SOD_B = { bindings: [{ role: K.r2, members: [ALICE] }] };
const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: IDS.map((id) => ({ name: rp(id), policy: foreignPolicy(K) })).concat([
      { name: rp("sod-b"), policy: SOD_B },
    ]),
  },
  "converge-guardrails-stack-",
);

const OUTSIDER = "user:eve@outside.test";

const rules = (name: string, doc: unknown) => writeRules(ws, name, doc);

/** A member resource granting `member` `role` on restore plan `id`. */
const member = (id: string, role: string, m: string) => ({
  type: K.memberT,
  properties: { name: id, role, member: m },
});

interface SarifLog {
  runs: {
    tool: { driver: { rules: { id: string }[] } };
    invocations?: { executionSuccessful: boolean }[];
    results: { ruleId: string; level: string; locations: unknown[] }[];
  }[];
}

describe("plan --format sarif", { timeout: 180_000 }, () => {
  it("writes the plan's guardrail results as a SARIF 2.1.0 log, and a failed run for a failed plan", async () => {
    const s = stackRunner(ws, "sarif");
    await s.write({ g: member("sarif", K.r1, OUTSIDER) });
    const file = await rules("sarif", {
      builtins: { "allowed-domains": { enforcement: "mandatory", domains: ["example.com"] } },
    });
    const r = await s.cli("plan", "--format", "sarif", "--policy", file);
    expectExit(r, 0);
    const log = JSON.parse(r.stdout) as SarifLog;
    expectValidSarif(log);
    expect(log.runs[0]!.results).toEqual([
      expect.objectContaining({
        ruleId: "allowed-domains",
        level: "error",
        locations: [
          {
            physicalLocation: { artifactLocation: { uri: "sarif.yaml" } },
            logicalLocations: [{ fullyQualifiedName: "g", kind: "resource" }],
          },
        ],
      }),
    ]);
    expect(log.runs[0]!.tool.driver.rules.map((x) => x.id)).toContain("allowed-domains");

    // A plan that fails: the log says the run did not succeed (and still validates).
    await s.write({ g: { type: K.memberT, properties: { name: "nowhere", role: K.r1, member: ALICE } } });
    const failed = await s.cli("plan", "--format", "sarif", "--policy", file);
    expectExit(failed, 1);
    const bad = JSON.parse(failed.stdout) as SarifLog;
    expectValidSarif(bad);
    expect(bad.runs[0]!.invocations?.[0]?.executionSuccessful).toBe(false);

    const both = await s.cli("plan", "--format", "sarif", "--json");
    expectExit(both, 1);
    expect(both.stderr).toContain("--json cannot be combined with --format sarif");
  });
});

/** How many setIamPolicy calls the emulator has had. */
const setCalls = async () =>
  Object.entries((await stats(ws.emu)).requests).reduce((n, [k, v]) => n + (k.includes("setIamPolicy") ? v : 0), 0);

describe("separation of duties across the stack", { timeout: 180_000 }, () => {
  it("refuses a grant whose pair the principal holds on another object of the stack", async () => {
    // The stack reads sod-b (it grants bob r1 there) and grants alice r1 on sod-a: alice holds r2
    // on sod-b, outside converge. On one object nobody holds both roles.
    const s = stackRunner(ws, "sod");
    await s.write({ g: member("sod-a", K.r1, ALICE), keep: member("sod-b", K.r1, BOB) });
    const sod = (scope: string) => ({
      builtins: { "separation-of-duties": { enforcement: "mandatory", pairs: [[K.r1, K.r2]], scope } },
    });
    const before = await setCalls();
    const refused = await s.cli("apply", "--auto-approve", "--policy", await rules("sod-stack", sod("stack")));
    expectExit(refused, 1);
    expect(refused.stderr).toContain("guardrail separation-of-duties (mandatory) refuses 1 access change");
    expect(refused.stderr).toContain(`grant of ${K.r1} to ${ALICE} on ${rp("sod-a")} (g)`);
    expect(await setCalls()).toBe(before);

    const plan = await s.cli("plan", "--json", "--policy", await rules("sod-stack", sod("stack")));
    const g = (JSON.parse(plan.stdout) as { converge: { guardrails: { policies: { name: string }[] } } }).converge
      .guardrails;
    // The report records the end state of every policy the plan read.
    expect(g.policies.map((p) => p.name)).toEqual([rp("sod-a"), rp("sod-b")]);

    const bad = await s.cli("plan", "--policy", await rules("sod-bad", sod("everywhere")));
    expectExit(bad, 1);
    expect(bad.stderr).toContain("built-in rule separation-of-duties: scope is one of object, stack");

    // Judged on one object (the default scope), the pair is not held together: applied.
    const applied = await s.cli("apply", "--auto-approve", "--policy", await rules("sod-object", sod("object")));
    expectExit(applied, 0);
    expect(applied.stdout).not.toContain("separation-of-duties (mandatory):");
    expect((await liveView(ws.emu, rp("sod-a"))).bindings.find((b) => b.role === K.r1)?.members).toContain(ALICE);
  });
});

describe("the lookalike-principal built-in", { timeout: 180_000 }, () => {
  it("refuses a grant to a principal that looks like another (mandatory), lists it (advisory)", async () => {
    // caro1 reads like carol, who holds r1 on every seeded object.
    const s = stackRunner(ws, "look");
    const lookalike = "user:caro1@example.com";
    await s.write({ g: member("look", K.r2, lookalike) });
    const doc = (enforcement: string) => ({ builtins: { "lookalike-principal": enforcement } });
    const before = await setCalls();
    const refused = await s.cli("apply", "--auto-approve", "--policy", await rules("look", doc("mandatory")));
    expectExit(refused, 1);
    expect(refused.stderr).toContain("guardrail lookalike-principal (mandatory) refuses 1 access change");
    expect(refused.stderr).toContain(`grant of ${K.r2} to ${lookalike}`);
    expect(await setCalls()).toBe(before);
    const advisory = await s.cli("apply", "--auto-approve", "--policy", await rules("look", doc("advisory")));
    expectExit(advisory, 0);
    expect(advisory.stdout).toContain(`lookalike-principal (advisory): grant of ${K.r2} to ${lookalike}`);
  });
});

describe("policy test on a saved plan", { timeout: 180_000 }, () => {
  it("judges the saved plan's access changes on the end state it recorded", async () => {
    const s = stackRunner(ws, "saved");
    await s.write({ g: member("saved", K.r1, OUTSIDER) });
    // Planned under one rule set; tested against another, which reads the whole policy.
    const planned = await rules("saved-plan", { builtins: { "basic-role": "off" } });
    const planFile = join(ws.dir, "saved.plan");
    expectExit(await s.cli("plan", "--out", planFile, "--policy", planned), 0);
    const tested = await rules("saved-test", {
      rules: [
        {
          id: "crowded",
          description: "at most one holder of r1 (carol holds it outside converge)",
          enforcement: "mandatory",
          condition: `change == 'grant' && size(policy.roles[role]) > 1`,
        },
      ],
      builtins: { "allowed-domains": { enforcement: "mandatory", domains: ["example.com"] } },
    });
    const cases = join(ws.dir, "saved.cases.yaml");
    const write = (expect: unknown[]) =>
      writeFile(cases, stringify({ cases: [{ name: "saved plan", plan: "saved.plan", expect }] }));
    await write([
      { rule: "crowded", principal: OUTSIDER, resource: "g" },
      { rule: "allowed-domains", principal: OUTSIDER, change: "grant" },
    ]);
    const pass = await runCli(["policy", "test", tested, cases], { cwd: ws.dir });
    expectExit(pass, 0);
    expect(pass.stdout).toContain("PASS saved plan");
    await write([{ rule: "allowed-domains" }]);
    const fail = await runCli(["policy", "test", tested, cases], { cwd: ws.dir });
    expectExit(fail, 1);
    expect(fail.stdout).toContain("found, not expected: rule=crowded");
    const sarif = await runCli(["policy", "test", tested, cases, "--format", "sarif"], { cwd: ws.dir });
    expectValidSarif(JSON.parse(sarif.stdout));

    // A plan made without rules records no end state: the case says so.
    expectExit(await s.cli("plan", "--out", planFile), 0);
    const none = await runCli(["policy", "test", tested, cases], { cwd: ws.dir });
    expectExit(none, 1);
    expect(none.stderr).toContain("does not record the end state rules judge");
  });
});
