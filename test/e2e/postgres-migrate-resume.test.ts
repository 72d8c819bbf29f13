// `state migrate` stopped at each of its steps (the CLI's test hook CONVERGE_TEST_MIGRATE_STOP
// makes it signal itself there, deterministically), then run again: the state is whole on the
// target (lineage, resources, the local .backup in the history, the pending write intents), the
// source retired, and meanwhile the source takes no writes. A target holding another lineage is
// still refused (issue 37, item 5).
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { useFreshDatabase } from "../postgres/helpers.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const CASES = [
  "checked",
  "fenced:default",
  "copied:default",
  "committed:default",
  "moved:default",
  "committed:dev",
  "fenced:dev",
];
const ids = (i: number) => [`c${i}-a`, `c${i}-b`];
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [...CASES.keys(), 20, 21, 22, 23]
    .flatMap(ids)
    .map((id) => ({ name: rp(id), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-migrate-resume-");
const fresh = useFreshDatabase("e2e_migrate_resume");

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { cwd: ws.dir, emulator: ws.emu, env: { ...fresh.db.env, ...env }, timeoutMs: 60_000 });
const q = async (sql: string, params: unknown[]) => (await fresh.db.admin.query(sql, params)).rows;
const statePath = (...parts: string[]) => join(ws.dir, "state", parts.join("."));

const INTENT = (stack: string) => ({
  id: `intent-${stack}`,
  created: "2024-01-01T00:00:00Z",
  kind: "restorePlan",
  policy: rp("elsewhere"),
  changes: [],
});

/** A local stack with two versions in default (so a .backup), a pending intent, and a dev workspace
 *  with its own state. */
async function localStack(name: string, i: number): Promise<{ file: string; state: State; backup: State; dev: State }> {
  const [a, b] = ids(i);
  const file = join(ws.dir, `${name}.yaml`);
  const one = bindingYaml("one", rp(a!), "roles/gkebackup.viewer", ["user:a@example.com"]);
  await writeFile(file, stackHead(name) + one);
  expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
  await writeFile(
    file,
    stackHead(name) + one + bindingYaml("two", rp(b!), "roles/gkebackup.viewer", ["user:b@example.com"]),
  );
  expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
  await writeFile(statePath(name, "json", "intents"), `${JSON.stringify({ begin: INTENT(name) })}\n`);
  const dev: State = {
    version: 1,
    lineage: "11111111-1111-4111-8111-111111111111",
    serial: 7,
    stack: name,
    resources: [],
    outputs: {},
  };
  await writeFile(statePath(name, "dev", "json"), JSON.stringify(dev));
  await writeFile(statePath(name, "workspaces"), "dev\n");
  const read = async (f: string) => JSON.parse(await readFile(f, "utf8")) as State;
  return {
    file,
    state: await read(statePath(name, "json")),
    backup: await read(statePath(name, "json", "backup")),
    dev,
  };
}

async function expectMovedToPostgres(name: string, m: { state: State; backup: State; dev: State }): Promise<void> {
  const rows = await q(
    "SELECT workspace, lineage, serial, state::text AS text FROM converge.states WHERE stack = $1 ORDER BY workspace",
    [name],
  );
  expect(rows.map((r) => [r.workspace, r.lineage])).toEqual([
    ["default", m.state.lineage],
    ["dev", m.dev.lineage],
  ]);
  expect((JSON.parse(rows[0].text) as State).resources).toEqual(m.state.resources);
  expect(Number(rows[0].serial)).toBeGreaterThan(m.state.serial);
  // The history: the local .backup's version, then the migrated one; no serial twice.
  const h = await q(
    "SELECT serial, lineage, operation FROM converge.history WHERE stack = $1 AND workspace = 'default' ORDER BY id",
    [name],
  );
  expect(h.map((r) => Number(r.serial))).toEqual([m.backup.serial, m.state.serial + 1]);
  expect(h.map((r) => r.operation)).toEqual(["state migrate (the local .backup)", "state migrate"]);
  const intents = await q("SELECT workspace, id FROM converge.intents WHERE stack = $1", [name]);
  expect(intents).toEqual([{ workspace: "default", id: `intent-${name}` }]);
  expect(await q("SELECT * FROM converge.moves WHERE stack = $1", [name])).toEqual([]);
  // The source is retired: the local files went (the state kept as its .backup), no fence left.
  for (const f of [
    statePath(name, "json"),
    statePath(name, "json", "intents"),
    statePath(name, "json", "moving"),
    statePath(name, "dev", "json"),
    statePath(name, "dev", "json", "moving"),
  ]) {
    expect(existsSync(f), f).toBe(false);
  }
  expect((JSON.parse(await readFile(statePath(name, "json", "backup"), "utf8")) as State).serial).toBe(m.state.serial);
  expect((await readFile(statePath(name, "workspaces"), "utf8")).trim()).toBe("");
}

describe("state migrate stopped at each step, then run again", { timeout: 300_000 }, () => {
  it.each(CASES.map((stop, i) => [stop, i] as const))(
    "local → postgres stopped at %s (SIGKILL), run again: whole on PostgreSQL, the local state retired",
    async (stop, i) => {
      const name = `resume${i}`;
      const m = await localStack(name, i);
      const killed = await cli(["state", "migrate", "--to", "postgres", "-f", m.file], {
        CONVERGE_TEST_MIGRATE_STOP: stop,
      });
      expect(killed.signal, killed.stdout + killed.stderr).toBe("SIGKILL");
      const ws0 = stop.endsWith(":dev") ? "dev" : "default";
      if (!stop.startsWith("checked") && !stop.startsWith("moved")) {
        // Fenced: the local copy takes no more writes (a plan's apply, a state rm), so the two never diverge.
        const refused = await cli(["state", "rm", "one", "--workspace", ws0, "-f", m.file]);
        expectExit(refused, 1);
        expect(refused.stderr).toContain(
          "is being moved to the postgres backend by a converge state migrate that did not finish",
        );
        expect(refused.stderr).toContain("converge state migrate --to postgres");
      }
      const again = await cli(["state", "migrate", "--to", "postgres", "-f", m.file]);
      expectExit(again, 0);
      await expectMovedToPostgres(name, m);
      // A third run has nothing left to do and refuses nothing.
      expectExit(await cli(["state", "migrate", "--to", "postgres", "-f", m.file]), 0);
      await expectMovedToPostgres(name, m);
    },
  );

  it("a SIGTERM after the target's commit: the run again finishes, the default workspace included", async () => {
    const m = await localStack("resumeterm", 20);
    const killed = await cli(["state", "migrate", "--to", "postgres", "-f", m.file], {
      CONVERGE_TEST_MIGRATE_STOP: "committed:default",
      CONVERGE_TEST_MIGRATE_SIGNAL: "SIGTERM",
    });
    expectExit(killed, 130);
    expectExit(await cli(["state", "migrate", "--to", "postgres", "-f", m.file]), 0);
    await expectMovedToPostgres("resumeterm", m);
  });

  it("both backends hold it, as an unfenced migrate stopped after its commit left it: run again, done", async () => {
    const m = await localStack("bothsides", 23);
    // What a converge without fences left: the copy committed on PostgreSQL, the local state not retired.
    const copy = join(ws.dir, "bothsides-copy.json");
    await writeFile(copy, JSON.stringify(m.state));
    expectExit(await cli(["state", "push", copy, "--backend", "postgres", "-f", m.file]), 0);
    const again = await cli(["state", "migrate", "--to", "postgres", "-f", m.file]);
    expectExit(again, 0);
    expect(existsSync(statePath("bothsides", "json"))).toBe(false);
    const rows = await q(
      "SELECT lineage, serial FROM converge.states WHERE stack = 'bothsides' AND workspace = 'default'",
      [],
    );
    expect(rows).toEqual([{ lineage: m.state.lineage, serial: String(m.state.serial + 1) }]);
  });

  it("a target holding another lineage of the workspace is still refused, nothing changed", async () => {
    const m = await localStack("otherlineage", 21);
    const foreign = join(ws.dir, "foreign.json");
    await writeFile(
      foreign,
      JSON.stringify({ ...m.state, lineage: "22222222-2222-4222-8222-222222222222", resources: [] }),
    );
    expectExit(await cli(["state", "push", foreign, "--backend", "postgres", "-f", m.file]), 0);
    const refused = await cli(["state", "migrate", "--to", "postgres", "-f", m.file]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain(
      'the postgres backend already has a state of stack "otherlineage": workspace "default" ' +
        "(lineage 22222222-2222-4222-8222-222222222222",
    );
    expect(refused.stderr).toContain(`another state than the one migrated (lineage ${m.state.lineage})`);
    expect(existsSync(statePath("otherlineage", "json"))).toBe(true);
    expect(existsSync(statePath("otherlineage", "json", "moving"))).toBe(false);
    expect(await q("SELECT id FROM converge.intents WHERE stack = $1", ["otherlineage"])).toEqual([]);
  });

  it("postgres → local stopped after its local commit: PostgreSQL takes no writes, run again: retired", async () => {
    const [a] = ids(22);
    const file = join(ws.dir, "pgdown.yaml");
    await writeFile(
      file,
      stackHead("pgdown").replace("resources:\n", "backend:\n  type: postgres\n  schema: down\nresources:\n") +
        bindingYaml("one", rp(a!), "roles/gkebackup.viewer", ["user:a@example.com"]),
    );
    expectExit(await cli(["apply", "--auto-approve", "-f", file]), 0);
    const before = (await q("SELECT lineage, serial FROM down.states WHERE stack = 'pgdown'", []))[0];
    await q(
      "INSERT INTO down.intents (stack, workspace, id, body) VALUES ('pgdown', 'default', 'pg-intent', $1::json)",
      [JSON.stringify({ ...INTENT("pgdown"), id: "pg-intent" })],
    );
    const killed = await cli(["state", "migrate", "--to", "local", "-f", file], {
      CONVERGE_TEST_MIGRATE_STOP: "committed:default",
    });
    expect(killed.signal).toBe("SIGKILL");
    const refused = await cli(["state", "rm", "one", "-f", file]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain("is being moved to the local backend");
    expectExit(await cli(["state", "migrate", "--to", "local", "-f", file]), 0);
    const local = JSON.parse(await readFile(statePath("pgdown", "json"), "utf8")) as State;
    expect(local.lineage).toBe(before.lineage);
    expect(local.serial).toBe(Number(before.serial) + 1);
    expect(await q("SELECT * FROM down.states WHERE stack = 'pgdown'", [])).toEqual([]);
    expect(await q("SELECT * FROM down.moves", [])).toEqual([]);
    expect(await q("SELECT * FROM down.intents", [])).toEqual([]);
    expect(await readFile(statePath("pgdown", "json", "intents"), "utf8")).toContain("pg-intent");
    expect((await q("SELECT count(*)::int AS n FROM down.history WHERE stack = 'pgdown'", []))[0].n).toBeGreaterThan(0);
  });
});
