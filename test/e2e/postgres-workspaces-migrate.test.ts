// Workspaces, state pull/push and state migrate through the real CLI (dist/), on the local file
// and on the run's real PostgreSQL server, against the emulator (issue 17).
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { useFreshDatabase } from "../postgres/helpers.js";
import { bindingYaml, membersOf, policyIn, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["ws-a", "ws-b", "mig-1", "mig-2", "mig-3", "push", "loc"].map((id) => ({
    name: rp(id),
    policy: { bindings: [] },
  })),
};

const ws = useEmulatorWorkspace(SEED, "converge-postgres-workspaces-");
const fresh = useFreshDatabase("e2e_ws");

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: ws.dir, emulator: ws.emu, env: { ...fresh.db.env, ...env }, timeoutMs: 60_000 });

async function stack(name: string, resources: string, backend = ""): Promise<string> {
  const file = join(ws.dir, `${name}.yaml`);
  await writeFile(file, stackHead(name).replace("resources:\n", `${backend}resources:\n`) + resources);
  return file;
}
const PG = "backend:\n  type: postgres\n  schema: teamws\n";

describe("workspaces", { timeout: 180_000 }, () => {
  it(
    "local: new, select, list, show; each workspace its own state file; CONVERGE_WORKSPACE " +
      "and --workspace choose; a missing one names workspace new",
    async () => {
      const file = await stack("loc", bindingYaml("v", rp("loc"), "roles/gkebackup.viewer", ["user:a@example.com"]));
      expect((await cli(["workspace", "list", "-f", file])).stdout).toBe("* default\n");
      const made = await cli(["workspace", "new", "dev", "-f", file]);
      expectExit(made, 0);
      expect(made.stdout).toContain('Created and switched to workspace "dev"');
      expect((await cli(["workspace", "show", "-f", file])).stdout).toBe("dev\n");
      expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
      expect(existsSync(join(ws.dir, "state", "loc.dev.json"))).toBe(true);
      expect(existsSync(join(ws.dir, "state", "loc.json"))).toBe(false);
      // The default workspace has no state: its plan adds the resource again.
      expect((await cli(["plan", "--workspace", "default", "-f", file])).stdout).toContain("1 to add");
      expect((await cli(["plan", "-f", file], { CONVERGE_WORKSPACE: "default" })).stdout).toContain("1 to add");
      expect((await cli(["plan", "-f", file])).stdout).toContain("No changes.");
      const missing = await cli(["plan", "--workspace", "prod", "-f", file]);
      expectExit(missing, 1);
      expect(missing.stderr).toContain('workspace "prod" does not exist');
      expect(missing.stderr).toContain("converge workspace new prod");
      const badSelect = await cli(["workspace", "select", "prod", "-f", file]);
      expectExit(badSelect, 1);
      expect(badSelect.stderr).toContain("converge workspace new prod");
      // Deleting: not the current one, not default, not one with resources unless --force.
      expectExit(await cli(["workspace", "delete", "dev", "-f", file]), 1);
      expectExit(await cli(["workspace", "select", "default", "-f", file]), 0);
      expect((await cli(["workspace", "list", "-f", file])).stdout).toBe("* default\n  dev\n");
      const refused = await cli(["workspace", "delete", "dev", "-f", file]);
      expectExit(refused, 1);
      expect(refused.stderr).toContain('workspace "dev" manages 1 resource');
      expect(refused.stderr).toContain("--force");
      expect((await cli(["workspace", "delete", "default", "-f", file])).stderr).toContain(
        '"default" workspace cannot be deleted',
      );
      expectExit(await cli(["workspace", "delete", "dev", "--force", "-f", file]), 0);
      expect((await cli(["workspace", "list", "-f", file])).stdout).toBe("* default\n");
      expect(existsSync(join(ws.dir, "state", "loc.dev.json"))).toBe(false);
    },
  );

  it(
    "postgres: workspaces in the database, each its own state and " + "lock; one workspace's claims block another's",
    async () => {
      const file = await stack(
        "pgws",
        bindingYaml("v", rp("ws-a"), "roles/gkebackup.viewer", ["user:a@example.com"]),
        PG,
      );
      expectExit(await cli(["workspace", "new", "staging", "-f", file]), 0);
      const applied = await cli(["apply", "--auto-approve", "-f", file]);
      expectExit(applied, 0);
      const rows = await fresh.db.admin.query("SELECT workspace, serial FROM teamws.states WHERE stack = 'pgws'");
      expect(rows.rows.map((r) => r.workspace)).toEqual(["staging"]);
      const listed = await cli(["workspace", "list", "--json", "-f", file]);
      expect(JSON.parse(listed.stdout)).toEqual({ current: "staging", workspaces: ["default", "staging"] });
      // The default workspace of the same stack would manage the same binding: refused, naming staging.
      const clash = await cli(["plan", "--workspace", "default", "-f", file]);
      expectExit(clash, 1);
      expect(clash.stderr).toContain('which stack "pgws" workspace "staging" manages (resource "v"');
      const missing = await cli(["apply", "--auto-approve", "--workspace", "nope", "-f", file]);
      expectExit(missing, 1);
      expect(missing.stderr).toContain("converge workspace new nope");
      expectExit(await cli(["workspace", "select", "default", "-f", file]), 0);
      expectExit(await cli(["workspace", "delete", "staging", "-f", file]), 1);
      expectExit(await cli(["workspace", "delete", "staging", "--force", "-f", file]), 0);
      expect(
        (await fresh.db.admin.query("SELECT count(*)::int AS n FROM teamws.claims WHERE stack = 'pgws'")).rows[0].n,
      ).toBe(0);
      // Its history stays; the binding may now be managed by the default workspace.
      expect(
        (
          await fresh.db.admin.query(
            "SELECT count(*)::int AS n FROM teamws.history WHERE stack = 'pgws' AND workspace = 'staging'",
          )
        ).rows[0].n,
      ).toBeGreaterThan(0);
      expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
    },
  );
});

describe("state pull, push and migrate", { timeout: 180_000 }, () => {
  it(
    "pull prints the state; push is compare-and-swap, refuses an " + "older serial or another lineage without --force",
    async () => {
      const file = await stack(
        "pushy",
        bindingYaml("v", rp("push"), "roles/gkebackup.viewer", ["user:a@example.com"]),
        PG,
      );
      expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
      const pulled = await cli(["state", "pull", "-f", file]);
      expectExit(pulled, 0);
      const v1 = JSON.parse(pulled.stdout) as State;
      expect(v1.stack).toBe("pushy");
      const saved = join(ws.dir, "pushy-v1.json");
      await writeFile(saved, pulled.stdout);
      expectExit(await cli(["state", "rm", "v", "-f", file]), 0);
      const older = await cli(["state", "push", saved, "-f", file]);
      expectExit(older, 1);
      expect(older.stderr).toContain(`has serial ${v1.serial}, older than the stored serial ${v1.serial + 1}`);
      const restored = await cli(["state", "push", "--force", saved, "-f", file]);
      expectExit(restored, 0);
      expect(restored.stdout).toContain(`it is now serial ${v1.serial + 2}`);
      expect((await cli(["plan", "-f", file])).stdout).toContain("No changes.");
      const foreign = join(ws.dir, "pushy-foreign.json");
      await writeFile(foreign, JSON.stringify({ ...v1, lineage: "00000000-0000-4000-8000-000000000000", serial: 99 }));
      const lineage = await cli(["state", "push", foreign, "-f", file]);
      expectExit(lineage, 1);
      expect(lineage.stderr).toContain("has lineage 00000000-0000-4000-8000-000000000000");
      const h = JSON.parse((await cli(["state", "history", "--json", "-f", file])).stdout) as Array<{
        operation: string;
      }>;
      expect(h.map((r) => r.operation)).toEqual(expect.arrayContaining(["apply", "state rm", "state push --force"]));
      const other = join(ws.dir, "other.json");
      await writeFile(other, JSON.stringify({ ...v1, stack: "someone-else" }));
      expect((await cli(["state", "push", other, "-f", file])).stderr).toContain('is a state of stack "someone-else"');
    },
  );

  it("migrate local → postgres → local keeps lineage and resources; refused if the target has state", async () => {
    const resources =
      bindingYaml("one", rp("mig-1"), "roles/gkebackup.viewer", ["user:a@example.com"]) +
      bindingYaml("two", rp("mig-2"), "roles/gkebackup.viewer", ["user:b@example.com"]);
    const file = await stack("roundtrip", resources);
    expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
    const local = JSON.parse(await readFile(join(ws.dir, "state", "roundtrip.json"), "utf8")) as State;
    const history = await cli(["state", "history", "-f", file]);
    expect(history.stderr).toContain("The local backend keeps no history");

    const up = await cli(["state", "migrate", "--to", "postgres", "-f", file]);
    expectExit(up, 0);
    expect(up.stdout).toContain('Migrated the state of stack "roundtrip" from local to postgres');
    expect(existsSync(join(ws.dir, "state", "roundtrip.json"))).toBe(false);
    const onPg = JSON.parse((await cli(["state", "pull", "--backend", "postgres", "-f", file])).stdout) as State;
    expect(onPg.lineage).toBe(local.lineage);
    expect(onPg.resources).toEqual(local.resources);
    expect((await cli(["plan", "--backend", "postgres", "-f", file])).stdout).toContain("No changes.");
    const h = JSON.parse(
      (await cli(["state", "history", "--json", "--backend", "postgres", "-f", file])).stdout,
    ) as Array<{ operation: string }>;
    // The local .backup (the version before the last apply's last save) goes into the history too.
    expect(h.map((r) => r.operation)).toEqual(["state migrate (the local .backup)", "state migrate"]);
    expect((await cli(["state", "migrate", "--to", "postgres", "--backend", "postgres", "-f", file])).stderr).toContain(
      "already on the postgres backend",
    );

    const down = await cli(["state", "migrate", "--to", "local", "--backend", "postgres", "-f", file]);
    expectExit(down, 0);
    expect(down.stdout).toContain("The history stays on PostgreSQL");
    const back = JSON.parse(await readFile(join(ws.dir, "state", "roundtrip.json"), "utf8")) as State;
    expect(back.lineage).toBe(local.lineage);
    expect(back.resources).toEqual(local.resources);
    expect((await cli(["plan", "-f", file])).stdout).toContain("No changes.");
    expect(
      (await fresh.db.admin.query("SELECT count(*)::int AS n FROM converge.states WHERE stack = 'roundtrip'")).rows[0]
        .n,
    ).toBe(0);

    // The target already has a state: refused, nothing changed on either side.
    const file3 = await stack("taken", bindingYaml("x", rp("mig-3"), "roles/gkebackup.viewer", ["user:c@example.com"]));
    expectExit(await cli(["apply", "--auto-approve", "--backend", "postgres", "-f", file3]), 0);
    expectExit(await cli(["apply", "--auto-approve", "-f", file3]), 0);
    const refused = await cli(["state", "migrate", "--to", "postgres", "-f", file3]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('the postgres backend already has a state of stack "taken": workspace "default"');
    expect(existsSync(join(ws.dir, "state", "taken.json"))).toBe(true);
    expect(membersOf(policyIn(await world(ws.emu), rp("mig-1")), "roles/gkebackup.viewer")).toEqual([
      "user:a@example.com",
    ]);
  });
});
