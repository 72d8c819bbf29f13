// The PostgreSQL backend passes the state-store conformance suite, on a real server (one
// database for this file, a fresh schema per test).
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { type PostgresStateStore, postgresStateStore } from "../../src/state/postgres/store.js";
import { freshDatabase, freshSchema, type TestDatabase } from "../postgres/helpers.js";
import { stateStoreConformance } from "./conformance.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase("conformance");
});
afterAll(async () => {
  await db?.drop();
});

stateStoreConformance(
  "postgres",
  async (stack) => {
    const schema = freshSchema();
    const stores: PostgresStateStore[] = [];
    const open = (name = stack) => {
      const s = postgresStateStore({ stack: name, schema, env: db.env });
      stores.push(s);
      return s;
    };
    return {
      store: open(),
      second: () => open(),
      otherStack: (other) => open(other),
      cleanup: async () => {
        for (const s of stores) await s.close();
      },
      plant: async (text) => {
        await db.admin.query(
          `UPDATE ${pg.escapeIdentifier(schema)}.states SET state = ` +
            `$2::json WHERE stack = $1 AND workspace = 'default'`,
          [stack, text],
        );
      },
    };
  },
  { liveLocks: true },
);
