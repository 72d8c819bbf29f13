// Team state on PostgreSQL (issue 17), the "Done when" cases beyond one stack's locking: the real
// CLI (dist/) against the emulator, with DATABASE_URL on the run's real PostgreSQL server.
// 20 different stacks applied at once on one database (all succeed, history complete), a CAS
// race between writers of the same serial (exactly one wins), history with actor and access
// counts, and two stacks claiming the same binding (the second plan fails naming the first,
// before any write).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { newState, type State, versionOf } from "../../src/state/index.js";
import { postgresStateStore } from "../../src/state/postgres/store.js";
import { useFreshDatabase } from "../postgres/helpers.js";
import { bindingYaml, membersOf, memberYaml, policyIn, rp, ep, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";

const MANY = 20;
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    ...Array.from({ length: MANY }, (_, i) => [
      { name: rp(`s${i}-a`), policy: { bindings: [] } },
      { name: rp(`s${i}-b`), policy: { bindings: [] } },
    ]).flat(),
    { name: rp("shared"), policy: { bindings: [] } },
    { name: rp("audit"), policy: { bindings: [{ role: "roles/gkebackup.admin", members: ["user:old@example.com"] }] } },
  ],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-postgres-team-");
const fresh = useFreshDatabase("e2e_team");

function postgresStack(name: string, resources: string, schema = "team"): string {
  return (
    stackHead(name).replace("resources:\n", `backend:\n  type: postgres\n  schema: ${schema}\nresources:\n`) + resources
  );
}

async function stackFile(name: string, resources: string, schema?: string): Promise<string> {
  const file = join(ws.dir, `${name}.yaml`);
  await writeFile(file, postgresStack(name, resources, schema));
  return file;
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: ws.dir, emulator: ws.emu, env: { ...fresh.db.env, ...env }, timeoutMs: 120_000 });

describe("team state on PostgreSQL", { timeout: 180_000 }, () => {
  it(`${MANY} different stacks applied at once on one database: all succeed, history complete`, async () => {
    const files = await Promise.all(
      Array.from({ length: MANY }, (_, i) =>
        stackFile(
          `s${i}`,
          bindingYaml("a", rp(`s${i}-a`), "roles/gkebackup.viewer", [`user:s${i}@example.com`]) +
            bindingYaml("b", rp(`s${i}-b`), "roles/gkebackup.viewer", [`user:s${i}@example.com`]),
        ),
      ),
    );
    const results = await Promise.all(
      files.map((f, i) =>
        cli(["apply", "--auto-approve", "--parallelism", "2", "-f", f], { CONVERGE_ACTOR: `ci-${i}` }),
      ),
    );
    results.forEach((r) => expectExit(r, 0));
    for (const r of results) expect(r.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    const w = await world(ws.emu);
    for (let i = 0; i < MANY; i++)
      expect(membersOf(policyIn(w, rp(`s${i}-b`)), "roles/gkebackup.viewer")).toEqual([`user:s${i}@example.com`]);
    const { rows } = await fresh.db.admin.query(
      "SELECT stack, serial, actor, operation, granted FROM team.history ORDER BY stack, serial",
    );
    const states = await fresh.db.admin.query("SELECT stack, serial FROM team.states");
    expect(states.rows).toHaveLength(MANY);
    for (let i = 0; i < MANY; i++) {
      const mine = rows.filter((r) => r.stack === `s${i}`);
      const last = Number(states.rows.find((s) => s.stack === `s${i}`)!.serial);
      // One apply, one row: its last version (the apply wrote each policy's result as it landed),
      // by this stack's actor.
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ serial: String(last), actor: `ci-${i}`, operation: "apply", granted: 2 });
    }
  });

  it(
    "a CAS race: of writers of the same serial, exactly one wins each " +
      "round, and history has one version per serial",
    async () => {
      const stores = Array.from({ length: 5 }, () =>
        postgresStateStore({ stack: "race", schema: "team", env: fresh.db.env }),
      );
      try {
        let current: State = await stores[0]!.write(newState("race"), undefined);
        for (let round = 0; round < 8; round++) {
          const from = versionOf(current)!;
          const attempts = await Promise.allSettled(
            stores.map((s, k) => s.write({ ...current, outputs: { writer: k } }, from)),
          );
          const won = attempts.filter((a): a is PromiseFulfilledResult<State> => a.status === "fulfilled");
          expect(won).toHaveLength(1);
          for (const a of attempts)
            if (a.status === "rejected")
              expect(String((a.reason as Error).message)).toContain("changed since it was read");
          current = won[0]!.value;
          expect(current.serial).toBe(from.serial + 1);
        }
        const h = await stores[1]!.history!();
        expect(h.map((r) => r.serial)).toEqual(Array.from({ length: 9 }, (_, k) => k + 1));
        expect((await stores[2]!.read())!.outputs).toEqual(current.outputs);
      } finally {
        for (const s of stores) await s.close();
      }
    },
  );

  it("state history shows the actor and the access counts; show --serial renders an old version", async () => {
    const file = await stackFile(
      "audited",
      bindingYaml("admins", rp("audit"), "roles/gkebackup.admin", ["user:new@example.com"]),
    );
    expectExit(await cli(["apply", "--auto-approve", "-f", file], { CONVERGE_ACTOR: "pipeline-42" }), 0);
    await writeFile(
      file,
      postgresStack(
        "audited",
        bindingYaml("admins", rp("audit"), "roles/gkebackup.admin", ["user:new@example.com", "user:two@example.com"]),
      ),
    );
    expectExit(await cli(["apply", "--auto-approve", "-f", file], { CONVERGE_ACTOR: "alice" }), 0);
    const json = await cli(["state", "history", "--json", "-f", file]);
    expectExit(json, 0);
    const h = JSON.parse(json.stdout) as Array<{
      serial: number;
      actor: string;
      operation: string;
      access?: { granted: number; revoked: number };
      planDigest?: string;
      host: string;
    }>;
    const applies = h.filter((r) => r.operation === "apply");
    expect(applies[0]).toMatchObject({ actor: "pipeline-42", access: { granted: 1, revoked: 1 } });
    expect(applies.at(-1)).toMatchObject({ actor: "alice", access: { granted: 1, revoked: 0 } });
    expect(applies[0]!.planDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(h.map((r) => r.serial)).toEqual([...h.map((r) => r.serial)].sort((a, b) => a - b));
    const text = await cli(["state", "history", "-f", file]);
    expect(text.stdout).toMatch(/^SERIAL\s+WRITTEN\s+ACTOR\s+HOST\s+OPERATION\s+GRANTED\s+REVOKED\s+PLAN/);
    expect(text.stdout).toMatch(/pipeline-42 .* apply\s+1\s+1\s+sha256:/);
    expect(text.stdout + text.stderr).not.toContain(fresh.db.password);
    // The first apply's version: one member; the current one: two.
    const first = applies[0]!.serial;
    const old = await cli(["show", "--serial", String(first), "-f", file]);
    expectExit(old, 0);
    expect(old.stdout).toContain("user:new@example.com");
    expect(old.stdout).not.toContain("user:two@example.com");
    expect((await cli(["show", "-f", file])).stdout).toContain("user:two@example.com");
    const missing = await cli(["show", "--serial", "999", "-f", file]);
    expectExit(missing, 1);
    expect(missing.stderr).toContain("no version with serial 999");
  });

  it(
    "two stacks claiming the same binding: the second plan fails " + "naming the first, and its apply writes nothing",
    async () => {
      const owner = await stackFile(
        "owner",
        bindingYaml("viewers", rp("shared"), "roles/gkebackup.viewer", ["user:a@example.com"]) +
          memberYaml("dana", ep("churn"), "roles/aiplatform.user", "user:dana@example.com"),
      );
      expectExit(await cli(["apply", "--auto-approve", "-f", owner]), 0);
      const intruder = await stackFile(
        "intruder",
        bindingYaml("readers", rp("shared"), "roles/gkebackup.viewer", ["user:b@example.com"]) +
          memberYaml("other", ep("churn"), "roles/aiplatform.user", "user:erin@example.com"),
      );
      const plan = await cli(["plan", "-f", intruder]);
      expectExit(plan, 1);
      expect(plan.stderr).toContain(
        `resource "readers" claims the binding of role roles/gkebackup.viewer on ${rp("shared")}, ` +
          `which stack "owner" workspace "default" manages (resource "viewers"`,
      );
      // A member of another role holder is no conflict: only the binding is named.
      expect(plan.stderr).not.toContain('"other"');
      const before = await world(ws.emu);
      const apply = await cli(["apply", "--auto-approve", "-f", intruder]);
      expectExit(apply, 1);
      expect(apply.stderr).toContain('stack "owner" workspace "default"');
      expect(policyIn(await world(ws.emu), rp("shared"))).toEqual(policyIn(before, rp("shared")));
      expect(policyIn(await world(ws.emu), ep("churn"))).toEqual(policyIn(before, ep("churn")));
      const json = await cli(["plan", "--json", "-f", intruder]);
      expect(JSON.parse(json.stdout)).toMatchObject({
        errored: true,
        converge: { diagnostics: [{ severity: "error", code: "state/claim-conflict", address: "readers" }] },
      });
      // Who owns what.
      const claims = await cli(["state", "claims", "--json", "-f", intruder]);
      expectExit(claims, 0);
      const list = JSON.parse(claims.stdout) as Array<{
        stack: string;
        address: string;
        object: string;
        scope: string;
      }>;
      expect(list).toContainEqual(
        expect.objectContaining({
          stack: "owner",
          workspace: "default",
          address: "viewers",
          object: rp("shared"),
          scope: "binding",
        }),
      );
      expect(list).toContainEqual(
        expect.objectContaining({ stack: "owner", address: "dana", scope: "member", member: "user:dana@example.com" }),
      );
      expect(list.some((c) => c.stack === "intruder")).toBe(false);
      // Nor can the other stack adopt the owner's binding by import: refused, its state unwritten.
      const imported = await cli(["import", "-f", intruder, "readers", `${rp("shared")} roles/gkebackup.viewer`]);
      expectExit(imported, 1);
      expect(imported.stderr).toContain('which stack "owner" workspace "default" manages (resource "viewers"');
      const noClaims = JSON.parse((await cli(["state", "claims", "--json", "-f", intruder])).stdout) as Array<{
        stack: string;
      }>;
      expect(noClaims.some((c) => c.stack === "intruder")).toBe(false);
      // Once the owner destroys its binding, its claim goes, and the other stack may take it.
      await writeFile(
        owner,
        postgresStack("owner", memberYaml("dana", ep("churn"), "roles/aiplatform.user", "user:dana@example.com")),
      );
      expectExit(await cli(["apply", "--auto-approve", "-f", owner]), 0);
      const now = await cli(["apply", "--auto-approve", "-f", intruder]);
      expectExit(now, 0);
      expect(membersOf(policyIn(await world(ws.emu), rp("shared")), "roles/gkebackup.viewer")).toEqual([
        "user:b@example.com",
      ]);
    },
  );
});
