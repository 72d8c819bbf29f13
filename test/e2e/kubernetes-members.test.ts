// A Kubernetes service account (Workload Identity Federation for GKE) is a member Google documents:
// serviceAccount:{project}.svc.id.goog[{namespace}/{name}]. The client refused it as "not an email
// address"; `validate` must accept it, `apply` grant it (the emulator accepts it by its own rule),
// and a malformed one must be refused before any network call, saying what is expected.
// Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, livePolicy, runCli, stackTraceLines, useEmulatorWorkspace } from "./helpers.js";

const PLAN = "projects/my-project/locations/us-central1/restorePlans/nightly";
const ws = useEmulatorWorkspace(
  { projects: { "my-project": { number: "123456789012" } }, restorePlans: [{ name: PLAN }] },
  "converge-kubernetes-members-",
);

const stack = (member: string) => `name: ksa
provider: { project: my-project, location: us-central1 }
resources:
  runner:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties: { name: nightly, role: roles/gkebackup.viewer, member: "${member}" }
`;

async function run(member: string, command: string[]) {
  await writeFile(join(ws.dir, "stack.yaml"), stack(member));
  return runCli([...command, "-f", "stack.yaml"], { cwd: ws.dir, emulator: ws.emu });
}

describe("Kubernetes service accounts as members", { timeout: 60_000 }, () => {
  const KSA = "serviceAccount:my-project.svc.id.goog[default/my-ksa]";

  it("validate accepts serviceAccount:{project}.svc.id.goog[{namespace}/{name}]", async () => {
    const r = await run(KSA, ["validate"]);
    expect(r.stderr).toBe("");
    expectExit(r, 0);
  });

  it("apply grants it", async () => {
    const r = await run(KSA, ["apply", "--auto-approve", "--state", "state.json"]);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expectExit(r, 0);
    const policy = await livePolicy(ws.emu, PLAN);
    expect(policy.bindings).toEqual([{ role: "roles/gkebackup.viewer", members: [KSA] }]);
  });

  it("validate refuses a malformed one, saying which part is wrong and what is expected", async () => {
    const r = await run("serviceAccount:my-project.svc.id.goog[default/My_KSA]", ["validate"]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`is not a Kubernetes service account: the name is not a DNS subdomain .*; expected serviceA` +
          String.raw`ccount:\{project\}\.svc\.id\.goog\[\{namespace\}\/\{name\}\]`,
      ),
    );
  });
});
