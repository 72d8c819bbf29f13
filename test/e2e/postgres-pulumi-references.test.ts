// Pulumi's StackReference and `X.get` in programs run through the real CLI against the emulator:
// a stack reads another stack's outputs from its state (Pulumi's project is converge's stack, its
// stack converge's workspace; a secret output stays secret), and `Type.get(name, id)` reads a live
// grant at plan time without managing it. A missing stack, output or grant is an error at its line.
// Named for PostgreSQL: one test reads the other stack's state there (its test server starts for such paths).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, runCli, useEmulatorWorkspace } from "./helpers.js";
import { packageDir } from "./pulumi-helpers.js";
import { useFreshDatabase } from "../postgres/helpers.js";

const NIGHTLY = "projects/my-project/locations/us-central1/restorePlans/nightly";
const CHURN = "projects/my-project/locations/us-central1/endpoints/churn";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: NIGHTLY }],
  endpoints: [
    { name: CHURN, policy: { bindings: [{ role: "roles/aiplatform.user", members: ["group:ml@example.com"] }] } },
  ],
} as EmulatorWorld;
const SLOW = 300_000;
const ws = useEmulatorWorkspace(SEED, "converge-pulumi-refs-");
const fresh = useFreshDatabase("e2e_stackref");

const HEAD = `import * as pulumi from "converge-iam/pulumi";
import * as gcp from "converge-iam/google-native";
`;

const PRODUCER = `${HEAD}
const b = new gcp.gkebackup.v1.RestorePlanIamMember("owner", {
  name: "${NIGHTLY}",
  role: "roles/gkebackup.admin",
  member: "user:ann@example.com",
});
export const planName = b.name;
export const token = pulumi.secret("s3cret-t0ken-value");
`;

const CONSUMER = `${HEAD}
const producer = new pulumi.StackReference("acme/producer/default");
const planName = producer.requireOutput("planName");
new gcp.gkebackup.v1.RestorePlanIamMember("reader", {
  name: planName as pulumi.Output<string>,
  role: "roles/gkebackup.viewer",
  member: "user:bo@example.com",
});
export const token = producer.getOutput("token");
export const absent = producer.getOutput("absent");
export const details = producer.getOutputDetails("planName");
`;

const LOOKUP = `${HEAD}
const existing = gcp.aiplatform.v1beta1.EndpointIamBinding.get("existing", "${CHURN} roles/aiplatform.user");
new gcp.gkebackup.v1.RestorePlanIamBinding("mirror", {
  name: "${NIGHTLY}",
  role: "roles/gkebackup.viewer",
  members: existing.members as pulumi.Output<string[]>,
});
export const existingMembers = existing.members;
export const existingId = existing.id;
`;

const ENV = { GOOGLE_PROJECT: "my-project", GOOGLE_REGION: "us-central1" };
const cli = (dir: string, file: string, ...args: string[]) =>
  runCli([...args, "-f", file], { cwd: dir, emulator: ws.emu, env: ENV, timeoutMs: 90_000 });
const stateOf = async (dir: string, stack: string) =>
  JSON.parse(await readFile(join(dir, "state", `${stack}.json`), "utf8")) as State;

describe("StackReference", () => {
  it(
    "reads another stack's outputs from its state; a secret one stays secret",
    async () => {
      const dir = await packageDir(ws.dir, "refs", { "producer.ts": PRODUCER, "consumer.ts": CONSUMER });
      expectExit(await cli(dir, "producer.ts", "apply", "--auto-approve"), 0);
      const plan = await cli(dir, "consumer.ts", "plan");
      expectExit(plan, 0);
      expect(plan.stdout).not.toContain("s3cret-t0ken-value");
      expectExit(await cli(dir, "consumer.ts", "apply", "--auto-approve"), 0);
      const viewers = (await livePolicy(ws.emu, NIGHTLY)).bindings?.find((b) => b.role === "roles/gkebackup.viewer");
      expect(viewers?.members).toEqual(["user:bo@example.com"]);
      const state = await stateOf(dir, "consumer");
      expect(state.outputs).toEqual({ token: "s3cret-t0ken-value", details: { value: NIGHTLY } });
      expect(state.sensitive_outputs).toEqual(["token"]);
    },
    SLOW,
  );

  it(
    "on PostgreSQL: Pulumi's stack is the workspace of the referenced converge stack",
    async () => {
      const consumer = CONSUMER.replace("acme/producer/default", "acme/producer/prod").replace(
        '"reader"',
        '"pg-reader"',
      );
      const dir = await packageDir(ws.dir, "refs-pg", { "producer.ts": PRODUCER, "consumer.ts": consumer });
      const pg = (file: string, ...args: string[]) =>
        runCli([...args, "-f", file, "--backend", "postgres"], {
          cwd: dir,
          emulator: ws.emu,
          env: { ...ENV, ...fresh.db.env },
          timeoutMs: 90_000,
        });
      expectExit(await pg("producer.ts", "workspace", "new", "prod"), 0);
      expectExit(await pg("producer.ts", "apply", "--auto-approve", "--workspace", "prod"), 0);
      const plan = await pg("consumer.ts", "plan");
      expectExit(plan, 0);
      expect(plan.stdout).toContain("pg-reader");
      expect(plan.stdout).toContain(NIGHTLY);
      expect(plan.stdout).not.toContain("s3cret-t0ken-value");
      const local = await cli(dir, "consumer.ts", "plan");
      expectExit(local, 1);
      expect(local.stderr).toContain('cannot read the state of stack "producer" workspace "prod"');
    },
    SLOW,
  );

  it(
    "a missing stack or output is an error at its line",
    async () => {
      const reference = (name: string, line: string) =>
        `${HEAD}\nconst p = new pulumi.StackReference("${name}");\nexport const x = ${line};\n`;
      const missingOutput = reference("producer/default", 'p.requireOutput("nope")');
      const missingStack = reference("acme/nowhere/prod", 'p.getOutput("planName")');
      const dir = await packageDir(ws.dir, "refs-missing", {
        "producer.ts": PRODUCER,
        "no-output.ts": missingOutput,
        "no-stack.ts": missingStack,
      });
      expectExit(await cli(dir, "producer.ts", "apply", "--auto-approve"), 0);
      const a = await cli(dir, "no-output.ts", "plan");
      expectExit(a, 1);
      expect(a.stderr).toMatch(/no-output\.ts:5:\d+/);
      expect(a.stderr).toContain('StackReference "producer/default" has no output "nope"');
      const b = await cli(dir, "no-stack.ts", "plan");
      expectExit(b, 1);
      expect(b.stderr).toMatch(/no-stack\.ts:4:\d+/);
      expect(b.stderr).toContain('StackReference "acme/nowhere/prod": cannot read the state of stack "nowhere"');
    },
    SLOW,
  );
});

describe("Type.get(name, id)", () => {
  it(
    "reads the live grant at plan time and manages nothing for it",
    async () => {
      const dir = await packageDir(ws.dir, "lookup", { "index.ts": LOOKUP });
      const plan = await cli(dir, "index.ts", "plan");
      expectExit(plan, 0);
      expect(plan.stdout).toContain("Plan: 0 to import, 1 to add, 0 to change, 0 to destroy.");
      expectExit(await cli(dir, "index.ts", "apply", "--auto-approve"), 0);
      const viewers = (await livePolicy(ws.emu, NIGHTLY)).bindings?.find((b) => b.role === "roles/gkebackup.viewer");
      expect(viewers?.members).toEqual(["group:ml@example.com"]);
      const state = await stateOf(dir, "index");
      expect(state.resources.map((r) => r.address)).toEqual(["mirror"]);
      expect(state.outputs).toEqual({
        existingMembers: ["group:ml@example.com"],
        existingId: `${CHURN} roles/aiplatform.user`,
      });
      expect((await livePolicy(ws.emu, CHURN)).bindings).toEqual([
        { role: "roles/aiplatform.user", members: ["group:ml@example.com"] },
      ]);
    },
    SLOW,
  );

  it(
    "a grant that does not exist is an error at the get call",
    async () => {
      const id = `${CHURN} roles/aiplatform.user user:nobody@example.com`;
      const get = `gcp.aiplatform.v1beta1.EndpointIamMember.get(\n  "gone",\n  "${id}",\n)`;
      const program = `${HEAD}\nconst g = ${get};\nexport const m = g.member;\n`;
      const dir = await packageDir(ws.dir, "lookup-missing", { "index.ts": program });
      const r = await cli(dir, "index.ts", "plan");
      expectExit(r, 1);
      expect(r.stderr).toMatch(/index\.ts:4:\d+/);
      expect(r.stderr).toContain("user:nobody@example.com is not a member of");
    },
    SLOW,
  );
});
