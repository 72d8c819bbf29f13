// `converge policy test` (issue 41) through the built CLI: a rules file against cases written as
// data (a stack and a seed world for the embedded emulator, the results expected) passes and fails
// as the cases say, and `--format sarif` writes a log that validates against the SARIF 2.1.0 schema
// (OASIS's, vendored from oasis-tcs/sarif-spec: sarif-2.1/schema/sarif-schema-2.1.0.json).
// Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { expectExit, runCli, useTempDir } from "./helpers.js";
import { RESTORE_PLAN as K, foreignPolicy } from "./iam-family-helpers.js";
import { rp } from "./apply-helpers.js";
import { expectValidSarif } from "./guardrail-helpers.js";

const ws = useTempDir("converge-policy-test-");
const OUTSIDER = "user:eve@outside.test";

async function setUp(): Promise<{ rules: string; cases: (expect: unknown[]) => Promise<string> }> {
  const d = ws.dir;
  await writeFile(
    join(d, "seed.json"),
    JSON.stringify({
      projects: { "my-project": { number: "123456789012" } },
      restorePlans: [{ name: rp("t1"), policy: foreignPolicy(K) }],
    }),
  );
  const stack = {
    name: "pt",
    provider: { project: "my-project", location: "us-central1", endpoint: "embedded" },
    resources: { g: { type: K.memberT, properties: { name: "t1", role: K.r1, member: OUTSIDER } } },
  };
  await writeFile(join(d, "stack.yaml"), stringify(stack));
  const rules = join(d, "rules.yaml");
  await writeFile(
    rules,
    stringify({ builtins: { "allowed-domains": { enforcement: "mandatory", domains: ["example.com"] } } }),
  );
  let n = 0;
  const cases = async (expected: unknown[]) => {
    const file = join(d, `cases-${++n}.yaml`);
    await writeFile(
      file,
      stringify({ cases: [{ name: `case ${n}`, stack: "stack.yaml", seed: "seed.json", expect: expected }] }),
    );
    return file;
  };
  return { rules, cases };
}

describe("converge policy test", { timeout: 120_000 }, () => {
  it("passes and fails as its cases say, and writes SARIF 2.1.0", async () => {
    const { rules, cases } = await setUp();
    const passing = await cases([{ rule: "allowed-domains", principal: OUTSIDER, change: "grant" }]);
    const pass = await runCli(["policy", "test", rules, passing], { cwd: ws.dir });
    expectExit(pass, 0);
    expect(pass.stdout).toContain("PASS case 1");

    const failing = await cases([]);
    const fail = await runCli(["policy", "test", rules, failing], { cwd: ws.dir });
    expectExit(fail, 1);
    expect(fail.stdout).toContain("FAIL case 2");
    expect(fail.stdout).toContain(
      `found, not expected: rule=allowed-domains enforcement=mandatory change=grant principal=${OUTSIDER}`,
    );

    const sarif = await runCli(["policy", "test", rules, passing, "--format", "sarif"], { cwd: ws.dir });
    expectExit(sarif, 0);
    const log = JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; level: string }[] }[] };
    expectValidSarif(log);
    expect(log.runs[0]!.results).toEqual([expect.objectContaining({ ruleId: "allowed-domains", level: "error" })]);
  });
});
