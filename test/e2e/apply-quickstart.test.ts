// Issue 4, acceptance 1 and 8 (output): the quickstart applies against its embedded emulator,
// the next plan shows no changes, the emulator's world equals the stack for what the stack owns
// and keeps every seeded grant it does not own; `output` prints the outputs.
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { expectExit, REPO, runCli, type CliResult, useTempDir } from "./helpers.js";
import { ep, membersOf, normalBindings, policyIn, readJson, rp } from "./apply-helpers.js";

const NIGHTLY = rp("nightly");
const CHURN = ep("churn");
const SVC = "serviceAccount:data-eng@my-project.iam.gserviceaccount.com";
const UNTIL_2027 = {
  title: "until-2027",
  description: "Temporary on-call access",
  expression: 'request.time < timestamp("2027-01-01T00:00:00Z")',
};

const ws = useTempDir("converge-apply-qs-");
let applied: CliResult;

beforeAll(async () => {
  // Only the two source files: a leftover state/ in the checkout must not leak in.
  for (const f of ["stack.yaml", "cloud.seed.yaml"])
    await copyFile(join(REPO, "examples", "quickstart", f), join(ws.dir, f));
  await mkdir(join(ws.dir, "state"), { recursive: true });
  applied = await runCli(["apply", "--auto-approve"], { cwd: ws.dir });
});

describe("quickstart apply (embedded emulator)", () => {
  it("applies with --auto-approve: exit 0 and the Terraform-style summary", () => {
    expectExit(applied, 0);
    expect(applied.stdout).toContain("Apply complete! Resources: 3 added, 0 changed, 0 destroyed.");
  });

  it("a following plan --detailed-exitcode exits 0 with No changes.", async () => {
    const r = await runCli(["plan", "--detailed-exitcode"], { cwd: ws.dir });
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
  });

  it("the emulator world equals the stack for what it owns and keeps every seeded grant it does not own", async () => {
    const w = await readJson<EmulatorWorld>(join(ws.dir, "state", "quickstart.emulator.world"));
    const nightly = policyIn(w, NIGHTLY);
    const churn = policyIn(w, CHURN);
    // Owned by the stack: the viewer binding is authoritative (carol, seeded on it, is gone),
    // the conditional admin binding matches exactly, the member resource added its member.
    expect(normalBindings(nightly)).toEqual([
      { role: "roles/gkebackup.admin", members: ["user:oncall@example.com"], condition: UNTIL_2027 },
      { role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] }, // seeded, not owned
      { role: "roles/gkebackup.viewer", members: ["group:sre@example.com", "user:alice@example.com"] },
    ]);
    expect(nightly?.version).toBe(3); // a conditional binding needs version 3
    expect(nightly?.auditConfigs).toEqual([{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" }] }]);
    // The member resource adds to roles/aiplatform.user; dana (seeded) stays.
    expect(membersOf(churn, "roles/aiplatform.user")).toEqual([SVC, "user:dana@example.com"].sort());
    expect(normalBindings(churn)).toHaveLength(1);
  });

  it("the state holds the three resources and the outputs", async () => {
    const s = await readJson<State>(join(ws.dir, "state", "quickstart.json"));
    expect(s.resources.map((r) => r.address).sort()).toEqual(["invoker", "restoreAdmins", "restoreViewers"]);
    expect(s.outputs).toEqual({
      lakeEndpoint: "thrift://10.0.0.7:9083",
      invokerId: `${CHURN} roles/aiplatform.user ${SVC}`,
    });
  });

  it("output prints every output; output NAME --json prints that one value as JSON", async () => {
    const [all, one, allJson] = await Promise.all([
      runCli(["output"], { cwd: ws.dir }),
      runCli(["output", "lakeEndpoint", "--json"], { cwd: ws.dir }),
      runCli(["output", "--json"], { cwd: ws.dir }),
    ]);
    expectExit(all, 0);
    // By name, names padded: as apply's "Outputs:" and the plan list them.
    expect(all.stdout).toBe(
      `invokerId    = "${CHURN} roles/aiplatform.user ${SVC}"\nlakeEndpoint = "thrift://10.0.0.7:9083"\n`,
    );
    expectExit(one, 0);
    expect(JSON.parse(one.stdout)).toBe("thrift://10.0.0.7:9083");
    expectExit(allJson, 0);
    expect(JSON.parse(allJson.stdout)).toEqual({
      lakeEndpoint: "thrift://10.0.0.7:9083",
      invokerId: `${CHURN} roles/aiplatform.user ${SVC}`,
    });
  });
});
