// Issue 18, secrets: a `secret: true` input (and everything computed from it, fn::secret too)
// never appears in any output or file but the state: plan text, JSON, Markdown, the access view,
// the JSON UI stream, saved plans, `show`, `output`, the debug log; a saved plan holds a hash of
// the inputs and `apply FILE` refuses other values. Checked by grepping everything written.
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { type CliResult, expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";
import { MEMBER_T, ep, membersOf, policyIn } from "./apply-helpers.js";

const SECRET = "s3cr3t-alice";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const STACK = `name: secrets
provider:
  project: my-project
  location: us-central1
config:
  token:
    type: string
    secret: true
variables:
  plainish:
    fn::secret: not-a-config-secret
resources:
  invoker:
    type: ${MEMBER_T}
    properties:
      name: churn
      role: roles/aiplatform.user
      member: user:\${token}@example.com
outputs:
  who: \${invoker.member}
  joined:
    fn::join: ["-", ["\${token}", "\${plainish}"]]
  open: visible
`;

const ws = useEmulatorWorkspace(SEED, "converge-secrets-");

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

describe("secret inputs", () => {
  it("never appear in any output or file but the state, and apply FILE checks the inputs' hash", async () => {
    const dir = join(ws.dir, "proj");
    await mkdir(dir);
    const stack = join(dir, "stack.yaml");
    const state = join(dir, "state", "secrets.json");
    await writeFile(stack, STACK);
    const env = { CONVERGE_VAR_token: SECRET, CONVERGE_LOG: "debug", CONVERGE_LOG_PATH: join(dir, "debug.log") };
    const outputs: CliResult[] = [];
    const cli = async (args: string[], e: Record<string, string> = env) => {
      const r = await runCli([...args, "-f", stack], { cwd: dir, emulator: ws.emu, env: e });
      outputs.push(r);
      return r;
    };
    const plan = await cli(["plan", "--out", "saved.plan"]);
    expectExit(plan, 0);
    expect(plan.stdout).toContain("(sensitive value)");
    const json = await cli(["plan", "--json"]);
    const invoker = (JSON.parse(json.stdout) as { resource_changes: { address: string; change: { after_sensitive: unknown } }[] }).resource_changes.find((c) => c.address === "invoker")!;
    expect(invoker.change.after_sensitive).toEqual({ member: true });
    await cli(["plan", "--format", "markdown"]);
    await cli(["plan", "--view", "access"]);
    await cli(["plan", "--json-stream"]);
    for (const args of [["show", "saved.plan"], ["show", "saved.plan", "--json"], ["show", "saved.plan", "--format", "markdown"]]) expectExit(await cli(args), 0);

    // apply FILE asks for the inputs again: another value is refused, the same one applies.
    const other = await cli(["apply", "saved.plan"], { ...env, CONVERGE_VAR_token: "another-secret" });
    expectExit(other, 1);
    expect(other.stderr).toContain("the inputs given to apply are not those the saved plan saved.plan was made with");
    expectExit(await cli(["apply", "saved.plan"]), 0);
    expect(membersOf(policyIn(await world(ws.emu), ep("churn")), "roles/aiplatform.user")).toEqual([`user:${SECRET}@example.com`]);

    const listed = await cli(["output"]);
    expect(listed.stdout).toContain('who = "(sensitive value)"');
    expect(listed.stdout).toContain('open = "visible"');
    await cli(["output", "--json"]);
    await cli(["output", "joined"]);
    await cli(["plan"]);
    await cli(["state", "show", "invoker"]);
    await cli(["state", "list", "--json"]);
    await cli(["show", "--json"]);

    for (const r of outputs) expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(outputs.map((r) => r.stdout + r.stderr).join("")).not.toContain("not-a-config-secret");
    const files = await filesUnder(dir);
    expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual(expect.arrayContaining(["debug.log", "saved.plan", "stack.yaml", "state/secrets.json"]));
    for (const f of files) {
      const text = await readFile(f, "utf8");
      // The state and its backup (the state before the last write, as Terraform keeps one).
      if (f === state || f === `${state}.backup`) {
        expect(text).toContain(SECRET);
        expect((await stat(f)).mode & 0o777).toBe(0o600);
      } else expect(text, f).not.toContain(SECRET);
    }
    // Only --show-sensitive prints it.
    const shown = await cli(["output", "who", "--show-sensitive", "--raw"]);
    expect(shown.stdout).toBe(`user:${SECRET}@example.com\n`);
  });
});
