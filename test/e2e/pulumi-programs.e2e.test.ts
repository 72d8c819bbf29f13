// Pulumi programs (written against @pulumi/pulumi's and @pulumi/google-native 0.32.0's API shapes)
// run through the real CLI against the emulator with only their import lines changed: top-level
// code with `export const` outputs, Config fed by --var, interpolate, all, .apply on an invoke's
// result and on resource outputs, a loop, dependsOn given one resource, protect; the live policies
// then equal what they declare. Options converge cannot honour are positioned errors.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, runCli, useEmulatorWorkspace } from "./helpers.js";
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

const PULUMI_IMPORTS: Record<string, string> = {
  "@pulumi/pulumi": "converge-iam/pulumi",
  "@pulumi/google-native": "converge-iam/google-native",
};
const ported = (program: string) =>
  program.replace(/from "(@pulumi\/[a-z-]+)"/g, (_, m: string) => `from "${PULUMI_IMPORTS[m]}"`);

const project = (name: string, program: string) => packageDir(ws.dir, name, { "index.ts": ported(program) });

const ENV = { GOOGLE_PROJECT: "my-project", GOOGLE_REGION: "us-central1" };
const cli = (dir: string, ...args: string[]) =>
  runCli([...args, "-f", "index.ts"], {
    cwd: dir,
    emulator: ws.emu,
    env: ENV,
    timeoutMs: 90_000,
  });

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
