// The PostgreSQL backend on a real server, beyond the conformance suite: locks held by other
// processes (named, waited for, freed by SIGKILL), CAS races between many writers, history
// rows, lost locks, schemas from a newer converge, and no password in any message. The children
// import the compiled module (dist/, built by `npm run build`, which `npm test` runs first).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { newState, type State, versionOf } from "../../src/state/index.js";
import { type PostgresStateStore, postgresStateStore } from "../../src/state/postgres/store.js";
import { freshDatabase, freshSchema, type TestDatabase } from "../postgres/helpers.js";
import { intentIds, writeIntent } from "./helpers.js";

const DIST = pathToFileURL(fileURLToPath(new URL("../../dist/state/postgres/store.js", import.meta.url))).href;

// Takes the lock, prints LOCKED and its holder, releases on "release" from stdin, else hangs.
const HOLDER = `
const { postgresStateStore } = await import(process.env.DIST_URL);
const store = postgresStateStore({ stack: process.env.STACK, schema: process.env.SCHEMA });
const lock = await store.lock("apply");
console.log("LOCKED " + JSON.stringify(lock.holder));
process.stdin.on("data", async (d) => {
  if (String(d).includes("release")) { await lock.release(); console.log("RELEASED"); process.exit(0); }
});
setInterval(() => {}, 1000);
`;

let db: TestDatabase;
const stores: PostgresStateStore[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await freshDatabase("store");
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const s of stores.splice(0)) await s.close();
});
afterAll(async () => {
  await db?.drop();
});

function open(stack: string, schema: string, env: NodeJS.ProcessEnv = db.env): PostgresStateStore {
  const s = postgresStateStore({ stack, schema, env });
  stores.push(s);
  return s;
}

function holderProcess(
  stack: string,
  schema: string,
): { proc: ChildProcess; locked: Promise<{ id: string; who: string; operation: string }> } {
  const proc = spawn(process.execPath, ["--input-type=module", "-e", HOLDER], {
    env: { ...process.env, ...db.env, DIST_URL: DIST, STACK: stack, SCHEMA: schema },
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(proc);
  const locked = new Promise<{ id: string; who: string; operation: string }>((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^LOCKED (.*)$/m.exec(out);
      if (m) resolve(JSON.parse(m[1]!) as { id: string; who: string; operation: string });
    });
    proc.on("exit", (code, signal) => reject(new Error(`holder exited (${code ?? signal}): ${out}${err}`)));
  });
  return { proc, locked };
}

async function rejection(p: Promise<unknown>): Promise<UserError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(UserError);
  return e as UserError;
}

function allText(e: UserError): string {
  return e.diagnostics.map((d) => `${d.summary}\n${d.detail ?? ""}\n${d.file ?? ""}`).join("\n") + e.message;
}

describe("postgres locks across processes", () => {
  it("a lock held by another process names its holder, at once", async () => {
    const schema = freshSchema();
    const { proc, locked } = holderProcess("team", schema);
    const holder = await locked;
    const started = Date.now();
    const e = await rejection(open("team", schema).lock("plan"));
    expect(Date.now() - started).toBeLessThan(2_000);
    const d = e.diagnostics[0]!;
    expect(d.code).toBe("state/locked");
    expect(d.summary).toContain(`state is locked by ${holder.who} (apply, pid ${proc.pid}`);
    expect(d.summary).toContain(holder.id);
    expect(d.detail).toContain("no force-unlock is needed");
    expect(d.detail).toContain("Use --lock-timeout to wait for it.");
  });

  it("--lock-timeout waits for the holder to release, then takes the lock", async () => {
    const schema = freshSchema();
    const { proc, locked } = holderProcess("team", schema);
    await locked;
    setTimeout(() => proc.stdin!.write("release\n"), 500);
    const started = Date.now();
    const lock = await open("team", schema).lock("apply", { timeoutMs: 15_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    await lock.release();
  });

  it("a SIGKILLed holder's lock goes with its session: no force-unlock", async () => {
    const schema = freshSchema();
    const { proc, locked } = holderProcess("team", schema);
    const holder = await locked;
    proc.kill("SIGKILL");
    await new Promise((r) => proc.on("exit", r));
    const store = open("team", schema);
    const lock = await store.lock("apply", { timeoutMs: 10_000 });
    expect(lock.holder.id).not.toBe(holder.id);
    await lock.release();
    // The killed holder's row is gone too (replaced, then released): nothing to force-unlock.
    const e = await rejection(store.forceUnlock(holder.id));
    expect(e.diagnostics[0]!.summary).toContain("not locked");
  });

  it("force-unlock refuses a live holder and says how its lock goes", async () => {
    const schema = freshSchema();
    const { locked } = holderProcess("team", schema);
    const holder = await locked;
    const e = await rejection(open("team", schema).forceUnlock(holder.id));
    expect(allText(e)).toContain("released when the process ends or its connection closes");
    await rejection(open("team", schema).lock("apply"));
  });

  it("a write after the lock's session was ended is refused: the lock was lost", async () => {
    const schema = freshSchema();
    const store = open("team", schema);
    const lock = await store.lock("apply");
    await db.admin.query(`SELECT pg_terminate_backend(backend_pid) FROM ${schema}.locks WHERE id = $1`, [
      lock.holder.id,
    ]);
    await new Promise((r) => setTimeout(r, 300));
    const e = await rejection(store.write(newState("team"), undefined));
    expect(e.diagnostics[0]!.code).toBe("state/lock-lost");
    expect(await store.read()).toBeUndefined();
    await lock.release();
    const again = await open("team", schema).lock("apply");
    await again.release();
  });
});

describe("postgres write intents", () => {
  it("recording after the lock's session was ended is refused (state/lock-lost), and nothing is recorded", async () => {
    const schema = freshSchema();
    const store = open("team", schema);
    const lock = await store.lock("apply");
    await store.recordIntents([writeIntent("before")]);
    await db.admin.query(`SELECT pg_terminate_backend(backend_pid) FROM ${schema}.locks WHERE id = $1`, [
      lock.holder.id,
    ]);
    await new Promise((r) => setTimeout(r, 300));
    const e = await rejection(store.recordIntents([writeIntent("after")]));
    expect(e.diagnostics[0]!.code).toBe("state/lock-lost");
    expect(intentIds(await open("team", schema).pendingIntents())).toEqual(["before"]);
    await lock.release();
  });

  it(
    "a batch larger than one INSERT keeps its order; an ID " + "recorded again keeps its place with its new body",
    async () => {
      const schema = freshSchema();
      const store = open("many", schema);
      // IDs whose text order is not their order.
      const batch = Array.from({ length: 2_345 }, (_, i) => writeIntent(`${(i * 7919) % 10_007}-${i}`));
      await store.recordIntents(batch);
      expect(intentIds(await open("many", schema).pendingIntents())).toEqual(intentIds(batch));
      const again = writeIntent(batch[5]!.id, { policy: "projects/p/locations/l/restorePlans/changed" });
      await store.recordIntents([writeIntent("last"), again, again]);
      const pending = await store.pendingIntents();
      expect(pending).toHaveLength(batch.length + 1);
      expect(pending[5]).toEqual(again);
      expect(pending.at(-1)!.id).toBe("last");
      await store.clearIntents(intentIds(batch));
      expect(intentIds(await store.pendingIntents())).toEqual(["last"]);
      const { rows } = await db.admin.query(`SELECT count(*)::int AS n FROM ${schema}.intents`);
      expect(rows[0].n).toBe(1);
    },
  );

  it("a failure of the database is a state/postgres user error naming what was being done", async () => {
    const schema = freshSchema();
    const store = open("broken", schema);
    expect(await store.pendingIntents()).toEqual([]);
    await db.admin.query(`DROP TABLE ${schema}.intents`);
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => store.recordIntents([writeIntent("a")]), "record the write intents"],
      [() => store.pendingIntents(), "read the write intents"],
      [() => store.clearIntents(["a"]), "clear the write intents"],
    ];
    for (const [op, action] of cases) {
      const e = await rejection(op());
      expect(e.diagnostics[0]!.code).toBe("state/postgres");
      expect(e.diagnostics[0]!.summary).toContain(`cannot ${action} in PostgreSQL`);
      expect(allText(e)).not.toContain(db.password);
    }
  });
});

describe("postgres writes", () => {
  it("many writers from the same version: exactly one wins, the others get state/conflict", async () => {
    const schema = freshSchema();
    const v1 = await open("race", schema).write(newState("race"), undefined);
    const writers = Array.from({ length: 8 }, (_, i) =>
      open("race", schema).write({ ...v1, outputs: { who: i } }, versionOf(v1)),
    );
    const results = await Promise.allSettled(writers);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results)
      if (r.status === "rejected") expect((r.reason as UserError).diagnostics[0]!.code).toBe("state/conflict");
    const { rows } = await db.admin.query(`SELECT serial FROM ${schema}.history WHERE stack = 'race' ORDER BY serial`);
    expect(rows.map((r: { serial: string }) => Number(r.serial))).toEqual([1, 2]);
  });

  it("two first writes (no state yet) race: exactly one creates it", async () => {
    const schema = freshSchema();
    await open("first", schema).read(); // tables exist
    const results = await Promise.allSettled([
      open("first", schema).write(newState("first"), undefined),
      open("first", schema).write(newState("first"), undefined),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("many stacks at once on a new schema: the tables are created once and every write lands", async () => {
    const schema = freshSchema();
    const stacks = Array.from({ length: 12 }, (_, i) => `stack-${i}`);
    await Promise.all(
      stacks.map(async (stack) => {
        const store = open(stack, schema);
        const lock = await store.lock("apply");
        const v1 = await store.write(newState(stack), undefined);
        await store.write({ ...v1, outputs: { done: true } }, versionOf(v1));
        await lock.release();
      }),
    );
    // Both writes landed; the history has one row per run (the lock held), with its last version.
    const { rows } = await db.admin.query(
      `SELECT stack, count(*)::int AS n, max(serial)::int AS serial FROM ${schema}.history GROUP BY stack`,
    );
    expect(rows).toHaveLength(stacks.length);
    for (const r of rows) expect(r).toMatchObject({ n: 1, serial: 2 });
  });

  it("history keeps every version with actor, host, operation, plan digest and access counts", async () => {
    const schema = freshSchema();
    const store = open("hist", schema);
    const lock = await store.lock("apply");
    const v1 = await store.write(newState("hist"), undefined, {
      planDigest: `sha256:${"a".repeat(64)}`,
      access: { granted: 3, revoked: 1 },
    });
    await lock.release();
    const before = process.env.CONVERGE_ACTOR;
    process.env.CONVERGE_ACTOR = "ci-pipeline-42";
    try {
      await store.write({ ...v1, outputs: { x: 1 } } as State, versionOf(v1), { operation: "state rm" });
    } finally {
      if (before === undefined) delete process.env.CONVERGE_ACTOR;
      else process.env.CONVERGE_ACTOR = before;
    }
    const { rows } = await db.admin.query(
      `SELECT serial, actor, host, operation, plan_digest, granted, ` +
        `revoked, state FROM ${schema}.history ORDER BY serial`,
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      operation: "apply",
      plan_digest: `sha256:${"a".repeat(64)}`,
      granted: 3,
      revoked: 1,
    });
    expect(rows[0].actor).toMatch(/\S/);
    expect(rows[0].host).toMatch(/\S/);
    expect(rows[1]).toMatchObject({ actor: "ci-pipeline-42", operation: "state rm", plan_digest: null, granted: null });
    expect(rows[0].state).toMatchObject({ serial: 1, lineage: v1.lineage });
  });

  it("history records the owner-approval guardrails approved for an apply, and by whom", async () => {
    const schema = freshSchema();
    const store = open("approved", schema);
    const approvals = [{ rule: "lead-ok", actor: "lead" }];
    const lock = await store.lock("apply");
    await store.write(newState("approved"), undefined, { approvals });
    await lock.release();
    expect((await store.history!()).map((r) => r.approvals)).toEqual([approvals]);
  });
});

describe("postgres schema and connection", () => {
  it("tables are created on first use, and a schema from a newer converge is refused", async () => {
    const schema = freshSchema();
    expect(await open("s", schema).read()).toBeUndefined();
    await db.admin.query(`INSERT INTO ${schema}.schema_migrations (version, converge_version) VALUES (99, '9.9.9')`);
    const e = await rejection(open("s", schema).read());
    expect(e.diagnostics[0]!.summary).toMatch(/version 99, written by a newer converge.*upgrade converge/);
  });

  it("sslmode in DATABASE_URL is read as libpq does: disable connects, require needs a server with TLS", async () => {
    const schema = freshSchema();
    expect(await open("ssl", schema, { DATABASE_URL: `${db.url}?sslmode=disable` }).read()).toBeUndefined();
    const e = await rejection(open("ssl", schema, { DATABASE_URL: `${db.url}?sslmode=require` }).read());
    expect(e.diagnostics[0]!.summary).toMatch(/SSL/i);
    expect(allText(e)).not.toContain(db.password);
  });

  it("describe() and connection errors never show the password", async () => {
    const schema = freshSchema();
    const url = new URL(db.url);
    const good = open("secret", schema);
    expect(good.describe()).toBe(`postgres (schema ${schema}) stack "secret" workspace "default"`);
    const wrongDb = new URL(url.href);
    wrongDb.pathname = "/no_such_database";
    const wrongPassword = new URL(url.href);
    wrongPassword.password = "not-the-password-xyz";
    const closedPort = new URL(url.href);
    closedPort.port = "1";
    const cases: Array<[NodeJS.ProcessEnv, string]> = [
      [{ DATABASE_URL: wrongDb.href }, db.password],
      [{ DATABASE_URL: wrongPassword.href }, "not-the-password-xyz"],
      [{ DATABASE_URL: closedPort.href }, db.password],
      [
        {
          PGHOST: "127.0.0.1",
          PGPORT: url.port,
          PGUSER: "postgres",
          PGPASSWORD: "pgpass-word-wrong",
          PGDATABASE: db.name,
        },
        "pgpass-word-wrong",
      ],
    ];
    for (const [env, secret] of cases) {
      const store = open("secret", schema, env);
      expect(store.describe()).not.toContain(secret);
      for (const attempt of [store.read(), store.lock("apply"), store.write(newState("secret"), undefined)]) {
        const e = await rejection(attempt);
        expect(e.diagnostics[0]!.code).toBe("state/postgres");
        expect(allText(e)).not.toContain(secret);
        expect(allText(e)).not.toContain(encodeURIComponent(secret));
      }
    }
  });
});
