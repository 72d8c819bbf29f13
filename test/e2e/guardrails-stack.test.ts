// Guardrails (issue 41) through the built CLI against a seeded emulator, beyond one access change:
// `plan --format sarif`, separation of duties across the stack's policies, the lookalike-principal
// built-in, and `policy test` on a saved plan. Needs `npm run build`.
import { describe, expect, it } from "vitest";
import { expectExit, useEmulatorWorkspace } from "./helpers.js";
import { ALICE, RESTORE_PLAN as K, foreignPolicy, stackRunner } from "./iam-family-helpers.js";
import { rp } from "./apply-helpers.js";
import { expectValidSarif, writeRules } from "./guardrail-helpers.js";

const IDS = ["sarif", "sod-a", "sod-b", "look", "saved"];
const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: IDS.map((id) => ({ name: rp(id), policy: foreignPolicy(K) })),
  },
  "converge-guardrails-stack-",
);

const OUTSIDER = "user:eve@outside.test";

const rules = (name: string, doc: unknown) => writeRules(ws, name, doc);

/** A member resource granting `member` `role` on restore plan `id`. */
const member = (id: string, role: string, m: string) => ({ type: K.memberT, properties: { name: id, role, member: m } });

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
