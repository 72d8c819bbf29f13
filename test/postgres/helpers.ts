// Helpers for tests on the run's PostgreSQL server (test/postgres/global-setup.ts): a database
// of one's own per test file, and the environment that points converge at it.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";

/** The server's admin URL; fails clearly when the run started none. */
export function pgAdminUrl(): string {
  const url = inject("pgAdminUrl");
  if (!url)
    throw new Error("no test PostgreSQL server: run this file with a path containing 'postgres', or the whole suite");
  return url;
}

export interface TestDatabase {
  name: string;
  url: string;
  /** The password in `url`: never to appear in converge's output. */
  password: string;
  /** DATABASE_URL for converge. */
  env: { DATABASE_URL: string };
  /** A client on the database (closed by drop). */
  admin: pg.Client;
  drop(): Promise<void>;
}

/** A fresh database named after `prefix`. */
export async function freshDatabase(prefix: string): Promise<TestDatabase> {
  const adminUrl = new URL(pgAdminUrl());
  const name = `t_${prefix.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  const server = new pg.Client({ connectionString: adminUrl.href });
  await server.connect();
  try {
    await server.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await server.end();
  }
  const url = new URL(adminUrl.href);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: url.href });
  await admin.connect();
  return {
    name,
    url: url.href,
    password: decodeURIComponent(adminUrl.password),
    env: { DATABASE_URL: url.href },
    admin,
    async drop() {
      await admin.end().catch(() => undefined);
      const c = new pg.Client({ connectionString: adminUrl.href });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A schema name no other test uses. */
export function freshSchema(prefix = "s"): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}

/** A database of this test file's own on the run's server: made before its tests, dropped after. */
export function useFreshDatabase(prefix: string): { readonly db: TestDatabase } {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await freshDatabase(prefix);
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    get db(): TestDatabase {
      if (!db) throw new Error("the test database is made in beforeAll");
      return db;
    },
  };
}
