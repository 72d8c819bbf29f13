// Issue 18, secrets: a `secret: true` input (and everything computed from it, fn::secret too)
// never appears in any output or file but the state: plan text, JSON, Markdown, the access view,
// the JSON UI stream, saved plans, `show`, `output`, the debug log; a saved plan holds a hash of
// the inputs and `apply FILE` refuses other values. Checked by grepping everything written.
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, ValidateOutput } from "../../src/generated/schemas.js";
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
    const invoker = (
      JSON.parse(json.stdout) as { resource_changes: { address: string; change: { after_sensitive: unknown } }[] }
    ).resource_changes.find((c) => c.address === "invoker")!;
    expect(invoker.change.after_sensitive).toEqual({ member: true });
    await cli(["plan", "--format", "markdown"]);
    // The review page: the principal computed from the secret is there, as "(sensitive value)".
    const page = await cli(["plan", "--format", "html"]);
    expect(page.stdout).toContain("(sensitive value)");
    expect(page.stdout).toContain("<!doctype html>");
    expectExit(await cli(["show", "saved.plan", "--format", "html"]), 0);
    await cli(["plan", "--view", "access"]);
    await cli(["plan", "--json-stream"]);
    for (const args of [
      ["show", "saved.plan"],
      ["show", "saved.plan", "--json"],
      ["show", "saved.plan", "--format", "markdown"],
    ])
      expectExit(await cli(args), 0);

    // apply FILE asks for the inputs again: another value is refused, the same one applies.
    const other = await cli(["apply", "saved.plan"], { ...env, CONVERGE_VAR_token: "another-secret" });
    expectExit(other, 1);
    expect(other.stderr).toContain("the inputs given to apply are not those the saved plan saved.plan was made with");
    expectExit(await cli(["apply", "saved.plan"]), 0);
    expect(membersOf(policyIn(await world(ws.emu), ep("churn")), "roles/aiplatform.user")).toEqual([
      `user:${SECRET}@example.com`,
    ]);

    const listed = await cli(["output"]);
    expect(listed.stdout).toContain('who    = "(sensitive value)"');
    expect(listed.stdout).toContain('open   = "visible"');
    await cli(["output", "--json"]);
    await cli(["output", "joined"]);
    await cli(["plan"]);
    await cli(["state", "show", "invoker"]);
    await cli(["state", "list", "--json"]);
    await cli(["show", "--json"]);

    for (const r of outputs) expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(outputs.map((r) => r.stdout + r.stderr).join("")).not.toContain("not-a-config-secret");
    const files = await filesUnder(dir);
    expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual(
      expect.arrayContaining(["debug.log", "saved.plan", "stack.yaml", "state/secrets.json"]),
    );
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

// A forEach over a secret list, a member interpolated from a secret scalar: what loading says
// (graph, validate and its JSON, load errors of plan) quotes no secret, and an address built
// from one is shown as plan shows it.
const FOR_EACH_STACK = `name: secret-keys
provider: { project: my-project, location: us-central1 }
config:
  tok: { type: string, secret: true }
  who: { type: list, secret: true, default: ["user:hidden1@example.com", "user:hidden2@example.com"] }
variables:
  fe: ["user:\${tok}@example.com"]
resources:
  a:
    type: ${MEMBER_T}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${tok}@example.com" }
  each:
    type: ${MEMBER_T}
    options: { forEach: "\${who}" }
    properties: { name: churn, role: roles/aiplatform.user, member: "\${each.value}" }
  tk:
    type: ${MEMBER_T}
    options: { forEach: "\${fe}" }
    properties: { name: churn, role: roles/aiplatform.admin, member: "\${each.value}" }
outputs:
  o: "\${tok}"
`;

describe("secrets met while loading", () => {
  const TOK = "t0k-s3cret";
  const HIDDEN = [
    "hidden1",
    "hidden2",
    "dup@example.com",
    "DUP@example.com",
    "secretmember",
    "x@example.com",
    TOK,
    "s3cr et",
  ];
  const setUp = async () => {
    const dir = join(ws.dir, `keys-${Math.random().toString(36).slice(2)}`);
    await mkdir(dir);
    await writeFile(join(dir, "stack.yaml"), FOR_EACH_STACK);
    return (args: string[]) => runCli([...args, "-f", join(dir, "stack.yaml")], { cwd: dir, emulator: ws.emu });
  };
  const expectNoSecret = (r: CliResult) => {
    for (const s of HIDDEN) expect(r.stdout + r.stderr, s).not.toContain(s);
  };

  it("graph shows an address built from a secret as plan does: (sensitive value)", async () => {
    const cli = await setUp();
    const graph = await cli(["graph", "--var", `tok=${TOK}`]);
    expectExit(graph, 0);
    expectNoSecret(graph);
    expect(graph.stdout).toContain(
      '"each[\\"(sensitive value)\\"]" [label = "each[\\"(sensitive ' +
        'value)\\"]\\ncloudnative:aiplatform/v1beta1:EndpointIamMember"];',
    );
    expect(graph.stdout).toContain('"tk[\\"(sensitive value)\\"]"');
    const plan = await cli(["plan", "--json", "--var", `tok=${TOK}`]);
    expectExit(plan, 0);
    expectNoSecret(plan);
    const addresses = (JSON.parse(plan.stdout) as { resource_changes: { address: string }[] }).resource_changes.map(
      (c) => c.address,
    );
    expect(addresses.sort()).toEqual([
      "a",
      'each["(sensitive value)"]',
      'each["(sensitive value)"]',
      'tk["(sensitive value)"]',
    ]);
  });

  it("validate, its JSON and plan quote no secret in their diagnostics, at the same positions", async () => {
    const cli = await setUp();
    const cases: [string[], string][] = [
      [
        ["--var", 'who=["user:dup@example.com","user:DUP@example.com"]'],
        'stack.yaml:12:3: Error: resources each["(sensitive value)"] and each["(sensitive ' +
          'value)"] both grant (sensitive value) role roles/aiplatform.user',
      ],
      [
        ["--var", 'who=["bad:secretmember"]'],
        'stack.yaml:15:69: Error: each["(sensitive value)"]: member "(sensitive value)" has unknown type',
      ],
      [
        ["--var", 'who=["user:x@example.com","user:x@example.com"]'],
        'stack.yaml:14:25: Error: resources.each.options.forEach: "(sensitive value)" is in the list twice',
      ],
      [
        ["--var", "tok=s3cr et"],
        'stack.yaml:19:70: Error: tk["(sensitive value)"]: member "(sensitive ' +
          'value)": what follows "user:" is not an email address',
      ],
    ];
    for (const [vars, expected] of cases) {
      const args = vars[1]!.startsWith("tok=") ? vars : [...vars, "--var", `tok=${TOK}`];
      for (const command of [["validate"], ["plan"]]) {
        const r = await cli([...command, ...args]);
        expectExit(r, 1);
        expectNoSecret(r);
        expect(r.stderr).toContain(expected);
      }
      const json = await cli(["validate", "--json", ...args]);
      expectExit(json, 1);
      expectNoSecret(json);
      const doc = JSON.parse(json.stdout) as ValidateOutput;
      expect(doc.diagnostics[0]!.summary).toContain("(sensitive value)");
      // (With tok="s3cr et", resource a's member from the same input is refused at load too.)
      expect(doc.diagnostics.map((d) => d.range!.start.line)).toContain(Number(expected.split(":")[1]));
    }
  });
});
