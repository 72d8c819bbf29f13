// The PostgreSQL backend through a real PgBouncer in front of the run's server, where the
// machine has one (Debian's pgbouncer package; skipped otherwise): session pooling works like a
// direct connection; transaction pooling, which shares server sessions between clients, is
// refused with a message saying it is not supported instead of handing the lock to two holders.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { newState } from "../../src/state/index.js";
import { type PostgresStateStore, postgresStateStore } from "../../src/state/postgres/store.js";
import { freshDatabase, freshSchema, type TestDatabase } from "../postgres/helpers.js";
import { freePort } from "../postgres/free-port.js";

function which(cmd: string): string | undefined {
  const dirs = ["/usr/sbin", "/usr/bin", "/usr/local/bin", ...(process.env.PATH ?? "").split(":")];
  return dirs
    .map((d) => join(d, cmd))
    .find((f) => {
      try {
        accessSync(f, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

const PGBOUNCER = which("pgbouncer");

/** The uid/gid pgbouncer runs as: it refuses root. */
function runAs(): { uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return {};
  return {
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString()),
  };
}

async function startBouncer(
  dir: string,
  db: TestDatabase,
  mode: "session" | "transaction",
  poolSize: number,
): Promise<{ url: string; proc: ChildProcess }> {
  const server = new URL(db.url);
  const port = await freePort();
  const ini = join(dir, `${mode}.ini`);
  await writeFile(join(dir, "users.txt"), `"postgres" "${db.password}"\n`);
  await writeFile(
    ini,
    [
      "[databases]",
      `${db.name} = host=127.0.0.1 port=${server.port} dbname=${db.name}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "auth_type = plain",
      `auth_file = ${join(dir, "users.txt")}`,
      `pool_mode = ${mode}`,
      `default_pool_size = ${poolSize}`,
      "unix_socket_dir =",
      "",
    ].join("\n"),
  );
  await chmod(join(dir, "users.txt"), 0o644);
  const proc = spawn(PGBOUNCER!, [ini], { ...runAs(), stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("process up")) resolve();
    });
    proc.on("exit", (code) => reject(new Error(`pgbouncer exited (${code}): ${err}`)));
  });
  const url = new URL(db.url);
  url.port = String(port);
  return { url: url.href, proc };
}

describe.skipIf(!PGBOUNCER)("postgres backend through PgBouncer", () => {
  let db: TestDatabase;
  let dir: string;
  const bouncers: ChildProcess[] = [];
  beforeAll(async () => {
    db = await freshDatabase("pgbouncer");
    dir = await mkdtemp(join(tmpdir(), "converge-pgbouncer-"));
    await chmod(dir, 0o755);
  });
  afterAll(async () => {
    for (const b of bouncers) b.kill("SIGTERM");
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Two stores (two converge processes) on one new schema through a PgBouncer in `mode`. */
  async function throughBouncer(
    mode: "session" | "transaction",
    poolSize: number,
    fn: (a: PostgresStateStore, b: PostgresStateStore) => Promise<void>,
  ): Promise<void> {
    const { url, proc } = await startBouncer(dir, db, mode, poolSize);
    bouncers.push(proc);
    const schema = freshSchema();
    const a = postgresStateStore({ stack: "pool", schema, env: { DATABASE_URL: url } });
    const b = postgresStateStore({ stack: "pool", schema, env: { DATABASE_URL: url } });
    try {
      await fn(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  }

  it("session pooling: the lock and writes work as on a direct connection", () =>
    throughBouncer("session", 10, async (a, b) => {
      const lock = await a.lock("apply");
      const refused = await b.lock("apply").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((refused as UserError).diagnostics[0]!.code).toBe("state/locked");
      expect((await a.write(newState("pool"), undefined)).serial).toBe(1);
      await lock.release();
      await (await b.lock("apply")).release();
    }));

  it("transaction pooling is refused, saying it is not supported", () =>
    throughBouncer("transaction", 1, async (a, b) => {
      await a.lock("apply");
      const refused = await b.lock("apply").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(UserError);
      const d = (refused as UserError).diagnostics[0]!;
      expect(d.code).toBe("state/postgres-pooling");
      expect(d.detail).toContain("Transaction pooling is not supported");
    }));
});
