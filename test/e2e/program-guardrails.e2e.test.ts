// Guardrail rules declared by a program stack (issue 41): `new GuardrailRule` and
// `new BuiltinGuardrail` are the `policies:` section of a YAML stack; the CLI plans and enforces
// them alike, and a rule that does not load is an error at the call that declared it.
// Needs `npm run build`.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, expectExit, runCli, stackTraceLines, useTempDir } from "./helpers.js";

const SEED = join(REPO, "examples", "quickstart", "cloud.seed.yaml");
const ws = useTempDir("converge-program-guardrails-");

/** A directory whose node_modules/converge-iam is the package, with `stack.ts` of these lines. */
async function program(name: string, ...body: string[]): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(REPO, join(dir, "node_modules", "converge-iam"), "dir");
  const head = [
    `import { BuiltinGuardrail, GuardrailRule, RestorePlanIamMember, type StackContext } from "converge-iam";`,
    `export default (stack: StackContext) => {`,
    `  stack.name = "guarded";`,
    `  stack.provider = { project: "my-project", location: "us-central1", ` +
      `endpoint: "embedded", seed: ${JSON.stringify(SEED)} };`,
    `  new RestorePlanIamMember("g", { name: "nightly", role: ` +
      `"roles/gkebackup.viewer", member: "user:eve@outside.test" });`,
  ];
  await writeFile(join(dir, "stack.ts"), `${head.concat(body, ["};"]).join("\n")}\n`);
  return dir;
}

const cli = (dir: string, ...args: string[]) => runCli([...args, "-f", "stack.ts"], { cwd: dir, timeoutMs: 60_000 });

describe("guardrails in a program stack", { timeout: 180_000 }, () => {
  it("declares rules and built-ins that every plan checks and apply enforces", async () => {
    const dir = await program(
      "declared",
      `  new GuardrailRule("no-outsiders", { description: "only example.com", enforcement: "advisory",`,
      `    condition: "change == 'grant' && member.domain != 'example.com'" });`,
      `  new BuiltinGuardrail("allowed-domains", { enforcement: "mandatory", domains: ["example.com"] });`,
    );
    const plan = await cli(dir, "plan");
    expectExit(plan, 0);
    expect(plan.stdout).toContain("no-outsiders (advisory): grant of roles/gkebackup.viewer to user:eve@outside.test");
    expect(plan.stdout).toContain("allowed-domains (mandatory):");
    const apply = await cli(dir, "apply", "--auto-approve");
    expectExit(apply, 1);
    expect(apply.stderr).toContain("guardrail allowed-domains (mandatory) refuses 1 access change");
    expect((await cli(dir, "plan", "--detailed-exitcode")).code).toBe(2);
  });

  it("a rule that does not load is an error at its call in the .ts file", async () => {
    const dir = await program(
      "bad",
      `  new GuardrailRule("typo", { description: "typo", enforcement: ` +
        `"advisory", condition: "membr.domain == 'x'" });`,
      `  new BuiltinGuardrail("allowed-domains", "mandatory");`,
      `  new BuiltinGuardrail("no-such-rule", "mandatory");`,
    );
    const r = await cli(dir, "plan");
    expectExit(r, 1);
    expect(r.stderr).toMatch(/^stack\.ts:6:3: Error: rule typo: unknown variable membr; did you mean member\?/m);
    expect(r.stderr).toMatch(/^stack\.ts:8:3: Error: unknown built-in rule "no-such-rule"/m);
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });
});
