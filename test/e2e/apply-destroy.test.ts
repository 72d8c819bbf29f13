// Issue 4, acceptance 7: `destroy --auto-approve` removes exactly what the stack owns (seeded
// grants, other members of a member resource's role and auditConfigs stay); a resource with
// `protect: true` blocks destroy with a message naming it, exit 1, nothing written.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import {
  bindingYaml,
  ep,
  memberYaml,
  membersOf,
  normalBindings,
  policyIn,
  readStateFile,
  rp,
  setCalls,
  stackHead,
} from "./apply-helpers.js";

const AUDIT = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" as const }] }];
const UNTIL_2027 = { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: {
        version: 3,
        bindings: [
          { role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] },
          // Same role as the stack's binding, but conditional: a different binding, not owned.
          { role: "roles/gkebackup.viewer", members: ["user:temp@example.com"], condition: UNTIL_2027 },
        ],
        auditConfigs: AUDIT,
      },
    },
    {
      name: rp("guarded"),
      policy: { bindings: [{ role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] }] },
    },
  ],
  endpoints: [
    // aiplatform v1beta1's Policy has no auditConfigs.
    {
      name: ep("churn"),
      policy: { bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com"] }] },
    },
    { name: ep("guarded"), policy: { bindings: [] } },
  ],
};

const OWNED =
  stackHead("owned") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com", "group:sre@example.com"]) +
  bindingYaml("admins", "nightly", "roles/gkebackup.admin", ["user:oncall@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "serviceAccount:runner@my-project.iam.gserviceaccount.com") +
  memberYaml(
    "reader",
    "churn",
    "roles/aiplatform.viewer",
    "user:erin@example.com",
    "    options:\n      dependsOn: [invoker]\n",
  );

const PROTECTED =
  stackHead("guarded") +
  bindingYaml(
    "keep",
    "guarded",
    "roles/gkebackup.viewer",
    ["user:alice@example.com"],
    "    options:\n      protect: true\n",
  ) +
  memberYaml("loose", "guarded", "roles/aiplatform.user", "user:bob@example.com");

const ws = useEmulatorWorkspace(SEED, "converge-apply-destroy-");

describe("destroy", () => {
  it("removes exactly what the stack owns and nothing else", async () => {
    const stackFile = join(ws.dir, "owned.yaml");
    const statePath = join(ws.dir, "owned.json");
    await writeFile(stackFile, OWNED);
    const seeded = await world(ws.emu);
    expectExit(
      await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
      }),
      0,
    );
    const mid = await world(ws.emu);
    expect(membersOf(policyIn(mid, ep("churn")), "roles/aiplatform.user")).toEqual([
      "serviceAccount:runner@my-project.iam.gserviceaccount.com",
      "user:dana@example.com",
    ]);

    const r = await runCli(["destroy", "--auto-approve", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expectExit(r, 0);
    expect(r.stdout).toContain("Destroy complete! Resources: 4 destroyed.");
    const after = await world(ws.emu);
    for (const name of [rp("nightly"), ep("churn")]) {
      // Bindings as seeded (the stack's grants gone, every seeded grant back where it was).
      expect(normalBindings(policyIn(after, name)), name).toEqual(normalBindings(policyIn(seeded, name)));
      expect(policyIn(after, name)?.auditConfigs, name).toEqual(name === ep("churn") ? undefined : AUDIT);
    }
    expect(membersOf(policyIn(after, ep("churn")), "roles/aiplatform.user")).toEqual(["user:dana@example.com"]);
    const s = await readStateFile(statePath);
    expect(s.resources).toEqual([]);
  });

  it("a protected resource blocks destroy: exit 1, names it, writes nothing", async () => {
    const stackFile = join(ws.dir, "guarded.yaml");
    const statePath = join(ws.dir, "guarded.json");
    await writeFile(stackFile, PROTECTED);
    expectExit(
      await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
      }),
      0,
    );
    const stateBefore = await readFile(statePath);
    const worldBefore = await world(ws.emu);
    await resetStats(ws.emu);

    const r = await runCli(["destroy", "--auto-approve", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expectExit(r, 1);
    const msg = r.stderr.split("\n").find((l) => l.includes("keep"));
    expect(msg, r.stderr).toMatch(/protect/);
    expect(r.stderr).not.toMatch(/\bloose\b.*protect/);
    expect(setCalls(await stats(ws.emu))).toBe(0);
    expect((await readFile(statePath)).equals(stateBefore)).toBe(true);
    // Not even the unprotected resource was removed.
    const worldAfter = await world(ws.emu);
    for (const name of [rp("guarded"), ep("guarded")])
      expect(policyIn(worldAfter, name)).toEqual(policyIn(worldBefore, name));
  });
});
