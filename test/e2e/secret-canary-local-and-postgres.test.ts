// The secret canary (issue 37, item 1): secret inputs used in a member, a condition title, an
// object name and outputs (directly, through a resource's `id`, through fn::secret) go through
// every command, on the local backend and on PostgreSQL, and no stdout, stderr, debug log, saved
// plan or file but the state (its backup and history) holds any of them.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { useFreshDatabase } from "../postgres/helpers.js";
import { tree } from "../support/file-tree.js";
import { BINDING_T, MEMBER_T, ep, rp } from "./apply-helpers.js";
import { type CliResult, runCli, setPolicyOutOfBand, useEmulatorWorkspace } from "./helpers.js";

const TOKEN = "s3cr3t-alice";
const OBJECT = "zq-hidden-ep";
const WRAPPED = "wrapped-canary-9";
const MISSING = "gone-secret-obj";
const CANARIES = [TOKEN, OBJECT, WRAPPED, MISSING];

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  endpoints: [
    { name: ep("churn"), policy: { bindings: [] } },
    { name: ep(OBJECT), policy: { bindings: [] } },
  ],
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
};

function stack(backend: string): string {
  return `name: canary
provider:
  project: my-project
  location: us-central1
${backend}config:
  token:
    type: string
    secret: true
  objname:
    type: string
    secret: true
resources:
  member:
    type: ${MEMBER_T}
    properties:
      name: churn
      role: roles/aiplatform.user
      member: user:\${token}@example.com
  titled:
    type: ${BINDING_T}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:bob@example.com]
      condition:
        title: t-\${token}
        expression: request.time < timestamp("2030-01-01T00:00:00Z")
  named:
    type: ${MEMBER_T}
    properties:
      name: \${objname}
      role: roles/aiplatform.viewer
      member: user:carol@example.com
outputs:
  direct: \${token}
  via_id: \${named.id}
  wrapped:
    fn::secret: ${WRAPPED}
  open: visible
`;
}

/** Not a command: the test removes the secret member from its policy, as someone with gcloud would. */
const REMOVE_SECRET_MEMBER = "(remove the secret member out of band)";

/** Every command a user runs in a stack's life, in order. */
const COMMANDS: string[][] = [
  ["validate"],
  ["validate", "--json"],
  ["graph"],
  ["plan"],
  ["plan", "--json"],
  ["plan", "--json-stream"],
  ["plan", "--format", "markdown"],
  ["plan", "--format", "html"],
  ["plan", "--view", "access"],
  ["plan", "--out", "saved.plan"],
  ["show", "saved.plan"],
  ["show", "saved.plan", "--json"],
  ["show", "saved.plan", "--format", "markdown"],
  ["show", "saved.plan", "--format", "html"],
  ["apply", "--auto-approve", "--json"],
  ["apply", "--auto-approve", "--json"],
  ["apply", "--auto-approve"],
  // Discovery lists the secret object and member among the project's grants.
  ["query", "--project", "my-project"],
  ["query", "--project", "my-project", "--json"],
  // The secret member removed out of band: drift reports it (exit 2) in every form, and acts on it.
  [REMOVE_SECRET_MEMBER],
  ["drift"],
  ["drift", "--json"],
  ["drift", "--format", "markdown"],
  ["drift", "--format", "sarif"],
  ["drift", "--adopt", "--out", "adopted.yaml"],
  ["drift", "--remediate", "--out", "restore.plan"],
  ["plan", "--target", "member", "--out", "targeted.plan"],
  ["show", "restore.plan"],
  ["apply", "restore.plan"],
  ["drift"],
  ["refresh"],
  ["output"],
  ["output", "--json"],
  ["output", "direct"],
  ["output", "via_id", "--raw"],
  ["output", "wrapped", "--json"],
  ["show"],
  ["show", "--json"],
  ["state", "list"],
  ["state", "list", "--json"],
  ["state", "show", "member"],
  ["state", "show", "titled"],
  ["state", "show", "named"],
  ["state", "rm", "named"],
  ["import", "named", `${ep(OBJECT)} roles/aiplatform.viewer user:carol@example.com`],
  ["state", "history"],
  ["state", "history", "--json"],
  ["state", "claims"],
  ["state", "claims", "--json"],
  ["destroy", "--auto-approve", "--json"],
];

/** Runs every command in `dir` (whose stack.yaml uses `backend`) and checks what was written. */
async function canary(
  dir: string,
  backendYaml: string,
  env: Record<string, string>,
  emu: Parameters<typeof runCli>[1],
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, "stack.yaml");
  await writeFile(file, stack(backendYaml));
  const base = {
    ...env,
    CONVERGE_VAR_token: TOKEN,
    CONVERGE_VAR_objname: OBJECT,
    CONVERGE_LOG: "debug",
    CONVERGE_LOG_PATH: join(dir, "debug.log"),
  };
  const results: { args: string[]; r: CliResult }[] = [];
  const cli = async (args: string[], extra: Record<string, string> = {}) => {
    const r = await runCli([...args, "-f", file], { ...emu, cwd: dir, env: { ...base, ...extra }, timeoutMs: 60_000 });
    results.push({ args, r });
    return r;
  };
  for (const args of COMMANDS) {
    if (args[0] !== REMOVE_SECRET_MEMBER) await cli(args);
    else {
      await setPolicyOutOfBand(emu!.emulator!, ep("churn"), (p) => ({
        ...p,
        bindings: (p.bindings ?? []).map((b) => ({ ...b, members: b.members.filter((m) => !m.includes(TOKEN)) })),
      }));
    }
  }
  // An error about an object whose name is secret.
  const missing = await cli(["plan"], { CONVERGE_VAR_objname: MISSING });
  expect(missing.code).toBe(1);
  const drifted = (args: string[], r: CliResult) => args[0] === "drift" && r.code === 2;
  const expected = (args: string[], r: CliResult) => (args[0] === "plan" && r === missing) || drifted(args, r);
  const failed = results.filter(({ args, r }) => r.code !== 0 && !expected(args, r));
  // drift saw the secret member's removal (its text says so, without the member).
  expect(results.find(({ args }) => args.join(" ") === "drift")!.r.stdout).toContain("(a) removed out of band");
  expect(failed.map(({ args, r }) => `${args.join(" ")}: ${r.code}\n${r.stderr}`)).toEqual([]);
  // Outputs computed from a secret (directly, through a resource's id, fn::secret) are sensitive.
  const planJson = results.find(({ args }) => args.join(" ") === "plan --json")!.r;
  const outputs = (JSON.parse(planJson.stdout) as { output_changes: Record<string, { after_sensitive: unknown }> })
    .output_changes;
  expect(Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, v.after_sensitive]))).toEqual({
    direct: true,
    via_id: true,
    wrapped: true,
    open: false,
  });
  // Applied again with nothing to change: the outputs message marks the secret ones (no value),
  // and an fn::secret output is not changed at every apply.
  const again = results.filter(({ args }) => args.join(" ") === "apply --auto-approve --json")[1]!.r;
  const messages = again.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; outputs?: Record<string, Record<string, unknown>> });
  const [planned, applied] = messages.filter((m) => m.type === "outputs").map((m) => m.outputs!);
  expect(planned).toEqual({
    direct: { sensitive: true, action: "noop" },
    via_id: { sensitive: true, action: "noop" },
    wrapped: { sensitive: true, action: "noop" },
    open: { sensitive: false, action: "noop" },
  });
  for (const k of ["direct", "via_id", "wrapped"]) expect(applied![k]).toEqual({ sensitive: true, type: "string" });
  // state claims lines its columns up (PostgreSQL: the local backend has none to list).
  const claimsText = results
    .find(({ args }) => args.join(" ") === "state claims")!
    .r.stdout.trimEnd()
    .split("\n");
  if (claimsText[0]!.startsWith("STACK")) {
    const at = claimsText[0]!.indexOf("MANAGES");
    for (const line of claimsText.slice(1)) expect(line.slice(at - 2, at + 1), line).toMatch(/^ {2}\S$/);
  }
  const leaks: string[] = [];
  for (const { args, r } of results) {
    for (const secret of CANARIES) {
      if (r.stdout.includes(secret)) leaks.push(`stdout of ${args.join(" ")}: ${secret}`);
      if (r.stderr.includes(secret)) leaks.push(`stderr of ${args.join(" ")}: ${secret}`);
    }
  }
  const written = [...tree(dir)].filter(([, what]) => !what.startsWith("dir:")).map(([rel]) => join(dir, rel));
  for (const f of written) {
    // The state and its backup hold the values; the stack holds the fn::secret literal it wrote.
    if (/state\/canary\.json(\.backup)?$/.test(f) || f === file) continue;
    const text = await readFile(f, "utf8");
    for (const secret of CANARIES) if (text.includes(secret)) leaks.push(`${f.slice(dir.length + 1)}: ${secret}`);
  }
  expect(leaks).toEqual([]);
}

describe("the secret canary", { timeout: 300_000 }, () => {
  const ws = useEmulatorWorkspace(SEED, "converge-secret-canary-");
  const fresh = useFreshDatabase("e2e_canary");

  it("finds no secret anywhere but the state, on the local backend", async () => {
    await canary(join(ws.dir, "local"), "", {}, { emulator: ws.emu });
  });

  it("finds no secret anywhere but the state, on PostgreSQL", async () => {
    await canary(join(ws.dir, "pg"), "backend:\n  type: postgres\n  schema: canary\n", fresh.db.env, {
      emulator: ws.emu,
    });
  });
});
