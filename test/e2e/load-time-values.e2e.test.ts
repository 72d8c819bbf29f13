// Values known when the stack loads are checked when it loads: a property made only of inputs,
// literals and forEach keys/values is normalised and checked (member, role, name, condition) by
// `validate` as by `plan`, and a reference to a forEach instance that does not exist is an error
// at the reference; either way exit 1 at file:line:column, no request, nothing written.
import { existsSync, readdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import {
  expectExit,
  resetStats,
  runCli,
  stackTraceLines,
  stats,
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";
import { ep, rp } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-load-time-values-");

const MEMBER = "cloudnative:aiplatform/v1beta1:EndpointIamMember";
const BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";

// The hostile tester's i1/stack.yaml.
const INPUTS_STACK = `name: inputs
provider: { project: my-project, location: us-central1 }
config:
  who: { type: string }
resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "\${who}" }
  b:
    type: ${BINDING}
    properties: { name: nightly, role: "roles/\${who}", members: ["\${who}"] }
`;

// The hostile tester's r2/stack.yaml.
const REFS_STACK = `name: refs2
provider: { project: my-project, location: us-central1 }
config:
  empty: { type: list, default: [] }
resources:
  none:
    type: ${MEMBER}
    options: { forEach: "\${empty}" }
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:\${each.value}" }
  mixed:
    type: ${MEMBER}
    options: { forEach: ["a", "b"] }
    properties: { name: churn, role: roles/aiplatform.user, member: "user:m\${each.key}@example.com" }
  r1:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.x1, member: "user:\${mixed[\\"zzz\\"].etag}@example.com" }
  r2:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.x2, member: "user:\${none[\\"q\\"].etag}@example.com" }
  r4:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.x4, member: "user:\${mixed[5].etag}@example.com" }
  r5:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.x5, member: "user:\${mixed.etag}@example.com" }
outputs:
  o: "\${mixed}"
`;

const NO_PREFIX = 'member "nobody" has no type prefix';

async function stackIn(name: string, text: string): Promise<string> {
  const dir = join(ws.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "stack.yaml"), text);
  return dir;
}

/** Runs `args` in `dir` against the workspace's emulator: exit 1, no request, no state written. */
async function refused(dir: string, args: string[]): Promise<string> {
  await resetStats(ws.emu);
  const r = await runCli(args, { cwd: dir, emulator: ws.emu });
  expectExit(r, 1);
  expect(stackTraceLines(r.stderr)).toEqual([]);
  expect(totalRequests(await stats(ws.emu))).toBe(0);
  expect(readdirSync(dir)).toEqual(["stack.yaml"]);
  return r.stderr;
}

describe("a property made of inputs is checked when the stack loads", () => {
  for (const command of ["validate", "plan"]) {
    it(`${command}: a member given by --var is checked at its position, with no request`, async () => {
      const dir = await stackIn(`inputs-${command}`, INPUTS_STACK);
      const err = await refused(dir, [command, "--var", "who=nobody"]);
      expect(err).toContain(`stack.yaml:8:71: Error: a: ${NO_PREFIX}`);
      expect(err).toContain(`stack.yaml:11:66: Error: b: ${NO_PREFIX}`);
      expect(err).toContain("2 errors, 0 warnings.");
    });
  }

  it("validate: a role, a name and a list of members from inputs are checked too", async () => {
    const stack = `name: more
provider: { project: my-project, location: us-central1 }
config:
  role: { type: string }
  plan: { type: string }
  viewers: { type: list }
resources:
  b:
    type: ${BINDING}
    properties: { name: "\${plan}", role: "\${role}", members: "\${viewers}" }
`;
    const dir = await stackIn("more", stack);
    const err = await refused(dir, [
      "validate",
      "--var",
      "role=viewer",
      "--var",
      "plan=no such plan",
      "--var",
      'viewers=["user:ok@example.com","nobody"]',
    ]);
    expect(err).toMatch(/stack\.yaml:10:25: Error: b: "no such plan" is not a valid restorePlan name/);
    expect(err).toMatch(/stack\.yaml:10:42: Error: b: role "viewer" is not of the form/);
    expect(err).toContain(`stack.yaml:10:62: Error: b: ${NO_PREFIX}`);
  });

  it("validate and plan still pass with good inputs", async () => {
    const dir = await stackIn("good", INPUTS_STACK.replace('role: "roles/${who}", ', "role: roles/gkebackup.viewer, "));
    expectExit(await runCli(["validate", "--var", "who=user:ok@example.com"], { cwd: dir, emulator: ws.emu }), 0);
    const plan = await runCli(["plan", "--var", "who=user:ok@example.com"], { cwd: dir, emulator: ws.emu });
    expectExit(plan, 0);
    expect(plan.stdout).toContain("2 to add");
  });

  it("plan with the embedded emulator: exit 1 and no world file is created", async () => {
    const dir = join(ws.dir, "embedded");
    await mkdir(dir);
    await writeFile(join(dir, "cloud.seed.json"), JSON.stringify(SEED));
    await writeFile(
      join(dir, "stack.yaml"),
      INPUTS_STACK.replace(
        "location: us-central1 }",
        "location: us-central1, endpoint: embedded, seed: cloud.seed.json }",
      ),
    );
    const r = await runCli(["plan", "--var", "who=nobody"], { cwd: dir });
    expectExit(r, 1);
    expect(r.stderr).toContain(`stack.yaml:8:71: Error: a: ${NO_PREFIX}`);
    expect(existsSync(join(dir, "state"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["cloud.seed.json", "stack.yaml"]);
  });
});

describe("a reference to a forEach instance that does not exist is an error when the stack loads", () => {
  for (const command of ["validate", "plan"]) {
    it(`${command}: each bad reference at its position, with no request`, async () => {
      const dir = await stackIn(`refs-${command}`, REFS_STACK);
      const err = await refused(dir, [command]);
      expect(err).toContain(
        `stack.yaml:16:73: Error: "\${mixed["zzz"].etag}": mixed has no instance "zzz"; its instances are "a", "b"`,
      );
      expect(err).toContain(
        `stack.yaml:19:73: Error: "\${none["q"].etag}": none has no instance "q"; it has no instances`,
      );
      expect(err).toContain(
        `stack.yaml:22:73: Error: "\${mixed[5].etag}": mixed has no instance 5; its instances are "a", "b"`,
      );
      expect(err).toContain(
        `stack.yaml:25:73: Error: "\${mixed.etag}": mixed is a forEach resource: name one instance, e.g. mixed["a"]`,
      );
      expect(err).toContain("4 errors, 0 warnings.");
    });
  }
});

describe("a number index reads the forEach instance keyed by its text, as Terraform does", () => {
  it("plan and apply read nums[1] (a list of numbers, keyed by index) and ports[8080] (a map's key)", async () => {
    const dir = await stackIn(
      "number-index",
      `name: numbers
provider: { project: my-project, location: us-central1 }
resources:
  nums:
    type: ${MEMBER}
    options: { forEach: [7, 8] }
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:n\${each.value}@example.com" }
  ports:
    type: ${MEMBER}
    options: { forEach: { "8080": web } }
    properties: { name: churn, role: roles/aiplatform.user, member: "user:\${each.value}@example.com" }
outputs:
  second: "\${nums[1].member}"
  port: "\${ports[8080].member}"
`,
    );
    expectExit(await runCli(["validate"], { cwd: dir, emulator: ws.emu }), 0);
    expectExit(await runCli(["apply", "--auto-approve"], { cwd: dir, emulator: ws.emu }), 0);
    const out = await runCli(["output", "--json"], { cwd: dir, emulator: ws.emu });
    expectExit(out, 0);
    expect(JSON.parse(out.stdout)).toEqual({ second: "user:n8@example.com", port: "user:web@example.com" });
  });
});
