// Pulumi's resource options in programs (and retainOnDelete in YAML), through the real CLI against
// the emulator: retainOnDelete makes destroy forget (the grant stays live), provider completes a
// short name with its project and region, aliases rename as `moved:` does, dependsOn takes one
// resource, an output or a promise; an option converge cannot honour is an error at its call.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, runCli, useEmulatorWorkspace } from "./helpers.js";
import { packageDir } from "./pulumi-helpers.js";

const rp = (id: string, project = "my-project") => `projects/${project}/locations/us-central1/restorePlans/${id}`;
const SEED: EmulatorWorld = {
  projects: {
    "my-project": { number: "123456789012" },
    "other-project": { number: "223456789012" },
  },
  restorePlans: [{ name: rp("nightly") }, { name: rp("weekly") }, { name: rp("nightly", "other-project") }],
};
/** Several CLI runs each: generous, so a loaded machine does not fail them. */
const SLOW = 300_000;
const ws = useEmulatorWorkspace(SEED, "converge-pulumi-options-");
const ENV = { GOOGLE_PROJECT: "my-project", GOOGLE_REGION: "us-central1" };

const dir = (name: string, files: Record<string, string>) => packageDir(ws.dir, name, files);
const cli = (d: string, file: string, ...args: string[]) =>
  runCli([...args, "-f", file], {
    cwd: d,
    emulator: ws.emu,
    env: ENV,
    timeoutMs: 90_000,
  });
const stateOf = async (d: string, name: string) =>
  JSON.parse(await readFile(join(d, "state", `${name}.json`), "utf8")) as State;
const membersOf = async (name: string, role: string) =>
  (await livePolicy(ws.emu, name)).bindings?.find((b) => b.role === role)?.members ?? [];

const OTHER = `const other = new gcp.Provider("other", { project: "other-project", region: "us-central1" });`;
const IMPORTS = `import * as pulumi from "converge-iam/pulumi";\nimport * as gcp from "converge-iam/google-native";\n`;

describe("retainOnDelete", () => {
  it(
    "in YAML: destroy forgets the resource and leaves its grant",
    async () => {
      const yaml = `name: retained
provider: { project: my-project, location: us-central1 }
resources:
  keep:
    type: cloudnative:backup/v1:RestorePlanIamMember
    options: { retainOnDelete: true }
    properties: { name: weekly, role: roles/gkebackup.viewer, member: user:keep@example.com }
  drop:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties: { name: weekly, role: roles/gkebackup.viewer, member: user:drop@example.com }
`;
      const d = await dir("yaml-retain", { "stack.yaml": yaml });
      expectExit(await cli(d, "stack.yaml", "apply", "--auto-approve"), 0);
      expect((await stateOf(d, "retained")).resources.find((r) => r.address === "keep")?.retainOnDelete).toBe(true);
      const destroyed = await cli(d, "stack.yaml", "destroy", "--auto-approve");
      expectExit(destroyed, 0);
      expect(destroyed.stdout).toContain("Access: 0 granted, 1 revoked");
      expect(await membersOf(rp("weekly"), "roles/gkebackup.viewer")).toEqual(["user:keep@example.com"]);
      expect((await stateOf(d, "retained")).resources).toEqual([]);
    },
    SLOW,
  );

  it(
    "in a program: destroy forgets the resource and leaves its grant",
    async () => {
      const program = `${IMPORTS}new gcp.backup.v1.RestorePlanIamMember(
  "kept",
  { name: "nightly", role: "roles/gkebackup.admin", member: "user:kept@example.com" },
  { retainOnDelete: true },
);
`;
      const d = await dir("program-retain", { "index.ts": program });
      expectExit(await cli(d, "index.ts", "apply", "--auto-approve"), 0);
      expectExit(await cli(d, "index.ts", "destroy", "--auto-approve"), 0);
      expect(await membersOf(rp("nightly"), "roles/gkebackup.admin")).toEqual(["user:kept@example.com"]);
      expect((await stateOf(d, "index")).resources).toEqual([]);
    },
    SLOW,
  );
});

describe("options in programs", () => {
  it(
    "provider, aliases and dependsOn as one resource, an output and a promise are honoured",
    async () => {
      const first = `${IMPORTS}${OTHER}
const viewer = { name: "nightly", role: "roles/gkebackup.viewer", member: "user:a@example.com" };
export const a = new gcp.backup.v1.RestorePlanIamMember("a", viewer, { provider: other }).id;
`;
      const d = await dir("program-options", { "index.ts": first });
      expectExit(await cli(d, "index.ts", "apply", "--auto-approve"), 0);
      expect(await membersOf(rp("nightly", "other-project"), "roles/gkebackup.viewer")).toEqual(["user:a@example.com"]);
      // Renamed with an alias; three dependents, each waiting in another form.
      const second = `${IMPORTS}${OTHER}
const viewer = { name: "nightly", role: "roles/gkebackup.viewer", member: "user:a@example.com" };
const moved = { provider: other, aliases: [{ name: "a" }] };
const renamed = new gcp.backup.v1.RestorePlanIamMember("renamed", viewer, moved);
const admin = (who: string) => ({
  name: "weekly",
  role: "roles/gkebackup.admin",
  member: \`user:\${who}@example.com\`,
});
new gcp.backup.v1.RestorePlanIamMember("one", admin("one"), { dependsOn: renamed });
new gcp.backup.v1.RestorePlanIamMember("out", admin("out"), { dependsOn: renamed.id });
new gcp.backup.v1.RestorePlanIamMember("later", admin("later"), { dependsOn: Promise.resolve([renamed]) });
`;
      await writeFile(join(d, "index.ts"), second);
      const plan = await cli(d, "index.ts", "plan");
      expectExit(plan, 0);
      expect(plan.stdout).toContain("# a has moved to renamed");
      expectExit(await cli(d, "index.ts", "apply", "--auto-approve"), 0);
      const state = await stateOf(d, "index");
      for (const n of ["one", "out", "later"])
        expect(state.resources.find((r) => r.address === n)?.dependencies).toEqual(["renamed"]);
      expect(state.resources.find((r) => r.address === "renamed")?.inputs.name).toBe(rp("nightly", "other-project"));
    },
    SLOW,
  );

  it(
    "refuses each option it cannot honour, at the constructor's line and column",
    async () => {
      const program = `${IMPORTS}const opts = { deleteBeforeReplace: true, replaceOnChanges: ["members"] };
const more = { customTimeouts: { create: "5m" }, additionalSecretOutputs: ["etag"] };
const viewer = { name: "nightly", role: "roles/gkebackup.viewer", member: "user:x@example.com" };
new gcp.backup.v1.RestorePlanIamMember("x", viewer, { ...opts, ...more });
`;
      const d = await dir("program-refused", { "index.ts": program });
      const r = await cli(d, "index.ts", "plan");
      expectExit(r, 1);
      for (const o of ["deleteBeforeReplace", "replaceOnChanges", "customTimeouts", "additionalSecretOutputs"]) {
        expect(r.stderr).toMatch(
          new RegExp(`^index\\.ts:6:1: Error: resource option ${o} is not supported by converge`, "m"),
        );
      }
    },
    SLOW,
  );

  it(
    "a provider argument it cannot honour per resource is refused",
    async () => {
      const program = `${IMPORTS}const p = new gcp.Provider("p", { project: "my-project", credentials: "{}" });
const viewer = { name: "${rp("nightly")}", role: "roles/gkebackup.viewer", member: "user:x@example.com" };
new gcp.backup.v1.RestorePlanIamMember("x", viewer, { provider: p });
`;
      const d = await dir("provider-refused", { "index.ts": program });
      const r = await cli(d, "index.ts", "plan");
      expectExit(r, 1);
      expect(r.stderr).toMatch(/^index\.ts:5:1: Error: provider p: credentials cannot be set per resource/m);
    },
    SLOW,
  );
});
