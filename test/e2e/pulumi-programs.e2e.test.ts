// Pulumi programs (written against @pulumi/pulumi's and @pulumi/google-native 0.32.0's API shapes)
// run through the real CLI against the emulator with only their import lines changed: top-level
// code with `export const` outputs, Config fed by --var, interpolate, all, .apply on an invoke's
// result and on resource outputs, a loop, dependsOn given one resource, protect; the live policies
// then equal what they declare. Options converge cannot honour are positioned errors.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, REPO, runCli, useEmulatorWorkspace } from "./helpers.js";
import { packageDir } from "./pulumi-helpers.js";

const NIGHTLY = "projects/my-project/locations/us-central1/restorePlans/nightly";
const CHURN = "projects/my-project/locations/us-central1/endpoints/churn";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: NIGHTLY }],
  endpoints: [{ name: CHURN }],
  federations: [
    {
      name: "projects/my-project/locations/us-central1/federations/lake",
      labels: { owner: "data-eng" },
      endpointUri: "thrift://10.0.0.7:9083",
    },
  ],
} as EmulatorWorld;
/** Several CLI runs each: generous, so a loaded machine does not fail them. */
const SLOW = 300_000;
const ws = useEmulatorWorkspace(SEED, "converge-pulumi-");

/** The programs as written for Pulumi; each test swaps the import lines only. */
const MINIMAL = `import * as gcp from "@pulumi/google-native";

const viewers = new gcp.gkebackup.v1.RestorePlanIamBinding("viewers", {
  name: "${NIGHTLY}",
  role: "roles/gkebackup.viewer",
  members: ["user:carol@example.com"],
});

export const bindingId = viewers.id;
`;

const FULL = `import * as pulumi from "@pulumi/pulumi";
import * as gcp from "@pulumi/google-native";

const config = new pulumi.Config();
const project = config.require("project");
const location = config.get("location") ?? "us-central1";
const viewers = config.requireObject<string[]>("viewers");

// An invoke's result, read while the program runs.
const lake = gcp.metastore.v1alpha.getFederationOutput({ federationId: "lake", location, project });
const owner = lake.labels.apply((labels) => labels?.["owner"] ?? "nobody");

const restorePlan = pulumi.interpolate\`projects/\${project}/locations/\${location}/restorePlans/nightly\`;
const admins = new gcp.gkebackup.v1.RestorePlanIamBinding(
  "admins",
  {
    name: restorePlan,
    role: "roles/gkebackup.admin",
    members: [pulumi.interpolate\`serviceAccount:\${owner}@\${project}.iam.gserviceaccount.com\`],
  },
  { protect: true },
);

const members: gcp.gkebackup.v1.RestorePlanIamMember[] = [];
viewers.forEach((member, i) => {
  const args = { name: restorePlan, role: "roles/gkebackup.viewer", member };
  members.push(new gcp.gkebackup.v1.RestorePlanIamMember(\`viewer-\${i}\`, args, { dependsOn: admins }));
});

// .apply on resource outputs, and all.
const invokerMember = pulumi
  .all([admins.members, owner])
  .apply(([ms, o]) => (ms.length === 1 ? \`group:\${o}@example.com\` : "group:nobody@example.com"));
const invoker = new gcp.aiplatform.v1beta1.EndpointIamMember("invoker", {
  name: \`projects/\${project}/locations/\${location}/endpoints/churn\`,
  role: "roles/aiplatform.user",
  member: invokerMember,
}, { dependsOn: members });

export const lakeUri = lake.endpointUri;
export const adminRole = admins.role.apply((r) => r.toUpperCase());
export const viewerCount = members.length;
export const invokerId = invoker.id;
`;

/** The Automation API program: an inline program reading its config with `new pulumi.Config()`,
 *  fed by setConfig, returning its outputs; printed as one JSON line at the end. */
const AUTOMATION = `import * as pulumi from "@pulumi/pulumi";
import * as gcp from "@pulumi/google-native";
import { LocalWorkspace } from "@pulumi/pulumi/automation";

const program = async () => {
  const config = new pulumi.Config();
  const reader = config.require("reader");
  const token = config.requireSecret("token");
  const member = new gcp.aiplatform.v1beta1.EndpointIamMember("reader", {
    name: "${CHURN}",
    role: "roles/aiplatform.viewer",
    member: pulumi.interpolate\`user:\${reader}\`,
  });
  return { readerId: member.id, token };
};

const lines: string[] = [];
const onOutput = (s: string) => lines.push(s);
const stack = await LocalWorkspace.createOrSelectStack({ stackName: "dev", projectName: "scripted", program });
await stack.setConfig("reader", { value: "ana@example.com" });
await stack.setConfig("scripted:token", { value: "s3cret-t0ken-value", secret: true });
const preview = await stack.preview({ onOutput });
const up = await stack.up({ onOutput });
const outputs = await stack.outputs();
const refresh = await stack.refresh({ onOutput });
const livedUp = up.summary.result;
const destroy = await stack.destroy({ onOutput });
console.log(JSON.stringify({
  preview: preview.changeSummary,
  up: livedUp,
  outputs,
  refresh: refresh.summary.result,
  destroy: destroy.summary.result,
  printed: lines.join(""),
}));
`;

const PULUMI_IMPORTS: Record<string, string> = {
  "@pulumi/pulumi/automation": "converge-iam/automation",
  "@pulumi/pulumi": "converge-iam/pulumi",
  "@pulumi/google-native": "converge-iam/google-native",
};
const ported = (program: string) =>
  program.replace(/from "(@pulumi\/[a-z/-]+)"/g, (_, m: string) => `from "${PULUMI_IMPORTS[m]}"`);

const project = (name: string, program: string) => packageDir(ws.dir, name, { "index.ts": ported(program) });

const ENV = { GOOGLE_PROJECT: "my-project", GOOGLE_REGION: "us-central1" };
const cli = (dir: string, ...args: string[]) =>
  runCli([...args, "-f", "index.ts"], {
    cwd: dir,
    emulator: ws.emu,
    env: ENV,
    timeoutMs: 90_000,
  });

/** Runs `node ...args` in `dir` against the emulator, as a user runs a script. */
function runNode(args: string[], dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, ...ENV, CLOUDNATIVE_EMULATOR_HOST: ws.emu.hostPort };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: dir, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("Pulumi programs with only their import lines changed", () => {
  it(
    "the minimal program applies its binding and exports its id",
    async () => {
      const dir = await project("minimal", MINIMAL);
      const r = await cli(dir, "apply", "--auto-approve");
      expectExit(r, 0);
      expect((await livePolicy(ws.emu, NIGHTLY)).bindings).toContainEqual({
        role: "roles/gkebackup.viewer",
        members: ["user:carol@example.com"],
      });
      const state = JSON.parse(await readFile(join(dir, "state", "index.json"), "utf8")) as State;
      expect(state.outputs).toEqual({
        bindingId: `${NIGHTLY} roles/gkebackup.viewer`,
      });
    },
    SLOW,
  );

  it(
    "Config, interpolate, all, .apply, a loop, dependsOn, protect and export const",
    async () => {
      const dir = await project("full", FULL);
      const vars = ["--var", "project=my-project", "--var", 'viewers=["user:ann@example.com","user:bo@example.com"]'];
      const plan = await cli(dir, "plan", ...vars);
      expectExit(plan, 0);
      expect(plan.stdout).toContain("Plan: 0 to import, 4 to add, 0 to change, 0 to destroy.");
      const r = await cli(dir, "apply", "--auto-approve", ...vars);
      expectExit(r, 0);
      const bindings = (await livePolicy(ws.emu, NIGHTLY)).bindings ?? [];
      expect(bindings).toContainEqual({
        role: "roles/gkebackup.admin",
        members: ["serviceAccount:data-eng@my-project.iam.gserviceaccount.com"],
      });
      const viewers = bindings.find((b) => b.role === "roles/gkebackup.viewer")?.members ?? [];
      expect(viewers).toEqual(expect.arrayContaining(["user:ann@example.com", "user:bo@example.com"]));
      expect((await livePolicy(ws.emu, CHURN)).bindings).toContainEqual({
        role: "roles/aiplatform.user",
        members: ["group:data-eng@example.com"],
      });
      const state = JSON.parse(await readFile(join(dir, "state", "index.json"), "utf8")) as State;
      expect(state.outputs).toEqual({
        lakeUri: "thrift://10.0.0.7:9083",
        adminRole: "ROLES/GKEBACKUP.ADMIN",
        viewerCount: 2,
        invokerId: `${CHURN} roles/aiplatform.user group:data-eng@example.com`,
      });
      const invoker = state.resources.find((x) => x.address === "invoker");
      expect(invoker?.dependencies).toEqual(["viewer-0", "viewer-1"]);
      expect(state.resources.find((x) => x.address === "admins")?.protect).toBe(true);
      // protect: destroy is refused.
      const destroy = await cli(dir, "destroy", "--auto-approve", ...vars);
      expectExit(destroy, 1);
      expect(destroy.stderr).toContain("admins has protect: true and cannot be destroyed");
    },
    SLOW,
  );

  it(
    "an Automation API script: setConfig feeds the inline program's Config; preview, up, outputs, refresh, destroy",
    async () => {
      const dir = await project("automation", "");
      await writeFile(join(dir, "index.mts"), ported(AUTOMATION));
      const r = await runNode([join(REPO, "node_modules", "tsx", "dist", "cli.mjs"), "index.mts"], dir);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
      expect(out.preview).toEqual({ create: 1 });
      expect(out.up).toBe("succeeded");
      expect(out.outputs).toEqual({
        readerId: { value: `${CHURN} roles/aiplatform.viewer user:ana@example.com`, secret: false },
        token: { value: "s3cret-t0ken-value", secret: true },
      });
      expect(out.refresh).toBe("succeeded");
      expect(out.destroy).toBe("succeeded");
      expect(out.printed).not.toContain("s3cret-t0ken-value");
      expect((await livePolicy(ws.emu, CHURN)).bindings ?? []).not.toContainEqual(
        expect.objectContaining({ role: "roles/aiplatform.viewer" }),
      );
    },
    SLOW,
  );

  it(
    "a --var the program never reads is an unknown input",
    async () => {
      const dir = await project("unread", MINIMAL);
      const r = await cli(dir, "plan", "--var", "nobody=1");
      expectExit(r, 1);
      expect(r.stderr).toContain('unknown input "nobody"');
    },
    SLOW,
  );
});
