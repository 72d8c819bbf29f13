// PostgreSQL workspaces and cross-stack claims on the run's real server: the workspace
// conformance suite through the factory (DATABASE_URL of a fresh database), and the claims
// table: written with each state, conflicts across stacks and workspaces, removed with the
// resources.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStateStore } from "../../src/state/factory.js";
import { newState, type State, versionOf } from "../../src/state/index.js";
import { type PostgresStateStore, postgresStateStore } from "../../src/state/postgres/store.js";
import { PostgresWorkspaces } from "../../src/state/postgres/workspaces.js";
import { ensureSchema, SCHEMA_VERSION } from "../../src/state/postgres/migrations.js";
import { freshDatabase, freshSchema, type TestDatabase } from "../postgres/helpers.js";
import { workspaceConformance } from "./workspace-conformance.js";
import { intentIds, writeIntent } from "./helpers.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase("workspaces");
  process.env.DATABASE_URL = db.url; // the factory takes the connection from the environment
});
afterAll(async () => {
  delete process.env.DATABASE_URL;
  await db?.drop();
});

workspaceConformance("postgres", async (stack) => {
  const schema = freshSchema("ws");
  return {
    open: (workspace) =>
      openStateStore({
        stackFile: "/nonexistent/stack.yaml",
        stackName: stack,
        backend: { type: "postgres", schema },
        ...(workspace ? { workspace } : {}),
      }),
    cleanup: async () => undefined,
  };
});

const BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
const MEMBER = "cloudnative:aiplatform/v1beta1:EndpointIamMember";
const rp = (id: string) => `projects/my-project/locations/us-central1/restorePlans/${id}`;
const ep = (id: string) => `projects/my-project/locations/us-central1/endpoints/${id}`;

function withBinding(s: State, address: string, plan: string, role: string, members: string[]): State {
  const inputs = { name: rp(plan), role, members };
  return {
    ...s,
    resources: [
      ...s.resources,
      { address, type: BINDING, id: `${rp(plan)} ${role}`, inputs, outputs: inputs, dependencies: [] },
    ],
  };
}

describe("claims on PostgreSQL", () => {
  const stores: PostgresStateStore[] = [];
  const open = (stack: string, schema: string, workspace = "default") => {
    const s = postgresStateStore({ stack, schema, workspace, env: db.env });
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of stores) await s.close();
  });

  it("a state's claims are recorded with it, found by other stacks' plans, and go with its resources", async () => {
    const schema = freshSchema("claims");
    const a = open("team-a", schema);
    const v1 = await a.write(
      withBinding(newState("team-a"), "viewers", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]),
      undefined,
    );
    const mine = [
      {
        address: "readers",
        claim: {
          scope: "binding" as const,
          kind: "restorePlan" as never,
          object: rp("nightly"),
          role: "roles/gkebackup.viewer",
        },
      },
    ];
    const conflicts = await open("team-b", schema).claims.conflicts(mine);
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatchObject({
      kind: "binding",
      owner: { stack: "team-a", workspace: "default", address: "viewers" },
      mine: { address: "readers" },
    });
    // The same stack's own claims are its own; another role on the same object is free.
    expect(await a.claims.conflicts(mine)).toEqual([]);
    expect(
      await open("team-b", schema).claims.conflicts([
        { ...mine[0]!, claim: { ...mine[0]!.claim, role: "roles/gkebackup.admin" } },
      ]),
    ).toEqual([]);
    // A member of that binding conflicts too (member-of-binding), from another workspace as well.
    const member = [
      {
        address: "one",
        claim: {
          scope: "member" as const,
          kind: "restorePlan" as never,
          object: rp("nightly"),
          role: "roles/gkebackup.viewer",
          member: "user:x@example.com",
        },
      },
    ];
    await new PostgresWorkspaces(a, "team-a", schema).create("dev");
    expect((await open("team-a", schema, "dev").claims.conflicts(member))[0]).toMatchObject({
      kind: "member-of-binding",
      owner: { stack: "team-a", address: "viewers" },
    });
    const all = await a.claims.all();
    expect(all).toEqual([
      {
        stack: "team-a",
        workspace: "default",
        address: "viewers",
        claim: expect.objectContaining({ scope: "binding", object: rp("nightly"), role: "roles/gkebackup.viewer" }),
      },
    ]);
    // The resource is destroyed: its claims go with it.
    await a.write({ ...v1, resources: [] }, versionOf(v1));
    expect(await open("team-b", schema).claims.conflicts(mine)).toEqual([]);
    expect(await a.claims.all()).toEqual([]);
  });

  it("member claims of two stacks: the same member conflicts, another member does not", async () => {
    const schema = freshSchema("claims");
    const inputs = { name: ep("churn"), role: "roles/aiplatform.user", member: "user:Dana@example.com" };
    await open("one", schema).write(
      {
        ...newState("one"),
        resources: [{ address: "dana", type: MEMBER, id: "x", inputs, outputs: inputs, dependencies: [] }],
      },
      undefined,
    );
    const claim = (member: string) => [
      {
        address: "m",
        claim: {
          scope: "member" as const,
          kind: "endpoint" as never,
          object: ep("churn"),
          role: "roles/aiplatform.user",
          member,
        },
      },
    ];
    expect(await open("two", schema).claims.conflicts(claim("user:dana@example.com"))).toHaveLength(1);
    expect(await open("two", schema).claims.conflicts(claim("user:erin@example.com"))).toEqual([]);
  });
});

describe("write intents of workspaces on PostgreSQL", () => {
  it(
    "each workspace has its own; deleting one deletes its intents, and a " +
      "workspace made again under its name has none",
    async () => {
      const schema = freshSchema("intents");
      const stores: PostgresStateStore[] = [];
      const open = (workspace: string) => {
        const s = postgresStateStore({ stack: "app", schema, workspace, env: db.env });
        stores.push(s);
        return s;
      };
      try {
        const main = open("default");
        const workspaces = new PostgresWorkspaces(main, "app", schema);
        await workspaces.create("dev");
        await main.recordIntents([writeIntent("main-1")]);
        await open("dev").recordIntents([writeIntent("dev-1"), writeIntent("dev-2")]);
        expect(intentIds(await main.pendingIntents())).toEqual(["main-1"]);
        expect(intentIds(await open("dev").pendingIntents())).toEqual(["dev-1", "dev-2"]);
        await workspaces.drop("dev");
        const { rows } = await db.admin.query(
          `SELECT workspace, id FROM ${schema}.intents WHERE stack = 'app' ORDER BY seq`,
        );
        expect(rows).toEqual([{ workspace: "default", id: "main-1" }]);
        await workspaces.create("dev");
        expect(await open("dev").pendingIntents()).toEqual([]);
        expect(intentIds(await main.pendingIntents())).toEqual(["main-1"]);
      } finally {
        for (const s of stores) await s.close();
      }
    },
  );
});

describe("a schema of version 3 (no intents table)", () => {
  it("is upgraded on first use: intents are recorded, the states already there are kept", async () => {
    const schema = freshSchema("v3");
    await ensureSchema(db.admin, schema, 3);
    const tables = async () =>
      (
        await db.admin.query("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [schema])
      ).rows.map((r: { tablename: string }) => r.tablename);
    expect(await tables()).not.toContain("intents");
    const old = newState("legacy");
    await db.admin.query(
      `INSERT INTO ${schema}.states (stack, workspace, lineage, serial, ` +
        `state) VALUES ('legacy', 'default', $1, 1, $2::json)`,
      [old.lineage, JSON.stringify({ ...old, serial: 1 })],
    );
    const store = postgresStateStore({ stack: "legacy", schema, env: db.env });
    try {
      expect(await store.pendingIntents()).toEqual([]);
      await store.recordIntents([writeIntent("a")]);
      expect(intentIds(await store.pendingIntents())).toEqual(["a"]);
      expect((await store.read())!.lineage).toBe(old.lineage);
      expect(await tables()).toContain("intents");
      const v = await db.admin.query(`SELECT max(version) AS v FROM ${schema}.schema_migrations`);
      expect(v.rows[0].v).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(8);
      expect(await tables()).toContain("drift_events");
    } finally {
      await store.close();
    }
  });
});

describe("a schema of the previous version (1: no workspaces, no claims)", () => {
  it("is upgraded on first use, and the states already there get their claims recorded", async () => {
    const schema = freshSchema("v1");
    await ensureSchema(db.admin, schema, 1);
    const old = withBinding(newState("legacy"), "viewers", "legacy", "roles/gkebackup.viewer", ["user:a@example.com"]);
    await db.admin.query(
      `INSERT INTO ${schema}.states (stack, workspace, lineage, serial, ` +
        `state) VALUES ('legacy', 'default', $1, 1, $2::json)`,
      [old.lineage, JSON.stringify({ ...old, serial: 1 })],
    );
    const other = postgresStateStore({ stack: "newcomer", schema, env: db.env });
    try {
      const mine = [
        {
          address: "readers",
          claim: {
            scope: "binding" as const,
            kind: "restorePlan" as never,
            object: rp("legacy"),
            role: "roles/gkebackup.viewer",
          },
        },
      ];
      const conflicts = await other.claims.conflicts(mine);
      expect(conflicts.map((c) => c.owner)).toEqual([
        expect.objectContaining({ stack: "legacy", workspace: "default", address: "viewers" }),
      ]);
      const v = await db.admin.query(`SELECT max(version) AS v FROM ${schema}.schema_migrations`);
      expect(v.rows[0].v).toBe(SCHEMA_VERSION);
    } finally {
      await other.close();
    }
  });
});
