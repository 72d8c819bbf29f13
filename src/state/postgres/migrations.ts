// The tables of the PostgreSQL backend, created on first use in the chosen schema and versioned
// in {schema}.schema_migrations. Migrations run in one transaction under an advisory lock, so
// two converge processes starting at once on an empty database create the tables once. A schema
// written by a newer converge (a version this one does not know) is refused, never touched.
import type pg from "pg";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { TOOL_VERSION } from "../../base/version.js";
import type { State } from "../../generated/schemas.js";
import { replaceClaims } from "./claims.js";
import { advisoryKey } from "./keys.js";
import { inTransaction } from "./connection.js";

/** Each entry is one schema version: the statements that take the schema from the previous one. */
const MIGRATIONS: ReadonlyArray<readonly string[]> = [
  [
    // One current state per (stack, workspace).
    `CREATE TABLE states (
       stack text NOT NULL, workspace text NOT NULL,
       lineage text NOT NULL, serial bigint NOT NULL,
       state json NOT NULL, updated timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (stack, workspace))`,
    // Every version ever written, with who wrote it and why: after a write, the previous version
    // is still here.
    `CREATE TABLE history (
       id bigserial PRIMARY KEY,
       stack text NOT NULL, workspace text NOT NULL,
       lineage text NOT NULL, serial bigint NOT NULL, state json NOT NULL,
       actor text NOT NULL, host text NOT NULL, operation text NOT NULL,
       plan_digest text, granted integer, revoked integer,
       converge_version text NOT NULL, written timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX history_by_stack ON history (stack, workspace, serial)`,
    // The holder of the (stack, workspace) lock; the lock itself is a session advisory lock.
    `CREATE TABLE locks (
       stack text NOT NULL, workspace text NOT NULL,
       id text NOT NULL, who text NOT NULL, host text NOT NULL, pid integer NOT NULL,
       operation text NOT NULL, since timestamptz NOT NULL, converge_version text NOT NULL,
       backend_pid integer NOT NULL, backend_start timestamptz,
       PRIMARY KEY (stack, workspace))`,
  ],
  [
    // The workspaces of a stack made with `workspace new` (`default` always exists, unlisted).
    `CREATE TABLE workspaces (
       stack text NOT NULL, workspace text NOT NULL,
       created timestamptz NOT NULL DEFAULT now(), actor text NOT NULL,
       PRIMARY KEY (stack, workspace))`,
    // What each (stack, workspace) state manages, replaced with every write of its state: the
    // cross-stack ownership check compares a plan's claims with the other stacks' here.
    `CREATE TABLE claims (
       stack text NOT NULL, workspace text NOT NULL, address text NOT NULL,
       object text NOT NULL, scope text NOT NULL, role text NOT NULL,
       condition_key text NOT NULL, member_key text NOT NULL, claim json NOT NULL,
       PRIMARY KEY (stack, workspace, address, object, scope, role, condition_key, member_key))`,
    `CREATE INDEX claims_by_object ON claims (object)`,
  ],
  [
    // What an apply will claim, recorded before its first cloud write (claims.ts: reserveClaims):
    // the check and the record are one transaction, so two stacks applying at once cannot both
    // take one grant. A row counts while the session that recorded it holds the (stack, workspace)
    // lock (lock_k1, lock_k2 by backend_pid): a crashed apply's rows are inert, and a released
    // lock removes them.
    `CREATE TABLE reservations (
       stack text NOT NULL, workspace text NOT NULL, address text NOT NULL,
       object text NOT NULL, scope text NOT NULL, role text NOT NULL,
       condition_key text NOT NULL, member_key text NOT NULL, claim json NOT NULL,
       backend_pid integer NOT NULL, lock_k1 integer NOT NULL, lock_k2 integer NOT NULL)`,
    `CREATE INDEX reservations_by_object ON reservations (object)`,
    `CREATE INDEX reservations_by_owner ON reservations (stack, workspace)`,
  ],
  [
    // Write-ahead intents (../../apply/intents.ts): one row per policy write an apply is about to
    // send, committed before it is sent and deleted once settled; what is left is settled by the
    // next plan or apply of the (stack, workspace). seq keeps the order they were recorded in.
    `CREATE TABLE intents (
       stack text NOT NULL, workspace text NOT NULL, id text NOT NULL,
       seq bigserial NOT NULL, body json NOT NULL, created timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (stack, workspace, id))`,
    `CREATE INDEX intents_in_order ON intents (stack, workspace, seq)`,
  ],
  [
    // The fence of an unfinished `state migrate` moving a (stack, workspace) state to another
    // backend (../move-fence.ts): while it is here the state takes no other command's lock.
    `CREATE TABLE moves (
       stack text NOT NULL, workspace text NOT NULL,
       lineage text NOT NULL, serial bigint NOT NULL, target text NOT NULL,
       since timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (stack, workspace))`,
  ],
  [
    // The run (the lock held: one apply, one destroy) that wrote a history row: the run's later
    // writes replace its row, so one apply is one row, holding the last version it wrote.
    `ALTER TABLE history ADD COLUMN run text`,
    `CREATE INDEX history_by_run ON history (stack, workspace, run)`,
  ],
  [
    // What `converge drift --watch` found: each drift once when found (or changed), and when gone.
    `CREATE TABLE drift_events (
       id bigserial PRIMARY KEY, stack text NOT NULL, workspace text NOT NULL, serial bigint NOT NULL,
       recorded timestamptz NOT NULL DEFAULT now(), actor text NOT NULL, host text NOT NULL,
       event text NOT NULL, class text NOT NULL, object text NOT NULL, finding json NOT NULL)`,
    `CREATE INDEX drift_events_by_stack ON drift_events (stack, workspace, id)`,
  ],
  [
    // The owner-approval guardrails approved for an apply (--approve), each with its approver.
    `ALTER TABLE history ADD COLUMN approvals json`,
  ],
];

/** The version that added the claims table: the states already there get theirs recorded then. */
const CLAIMS_VERSION = 2;

/** Records the claims of every state of the schema (in the migration's transaction). */
async function backfillClaims(client: pg.ClientBase, schema: string): Promise<void> {
  const r = await client.query<{ stack: string; workspace: string; text: string }>(
    `SELECT stack, workspace, state::text AS text FROM ${client.escapeIdentifier(schema)}.states`,
  );
  for (const row of r.rows) {
    const state = JSON.parse(row.text) as State;
    if (Array.isArray(state.resources)) await replaceClaims(client, schema, row.stack, row.workspace, state);
  }
}

/** The schema version this converge writes and understands. */
export const SCHEMA_VERSION = MIGRATIONS.length;

const UNDEFINED_TABLE = "42P01";
const INVALID_SCHEMA = "3F000";

function tooNew(schema: string, version: number): UserError {
  return new UserError(
    error(
      `the PostgreSQL schema "${schema}" has version ${version}, written by a newer converge; converge ` +
        `${TOOL_VERSION} knows versions up to ${SCHEMA_VERSION} — upgrade converge`,
      {
        code: "state/postgres-schema",
        detail:
          "Nothing was read or changed. Every converge that shares this schema must be " +
          "at least as new as the one that last migrated it.",
      },
    ),
  );
}

async function currentVersion(client: pg.ClientBase, q: string): Promise<number | undefined> {
  try {
    const r = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${q}.schema_migrations`);
    return r.rows[0]?.v ?? 0;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === UNDEFINED_TABLE || code === INVALID_SCHEMA) return undefined;
    throw e;
  }
}

/**
 * Makes `schema` hold this converge's tables (`upTo`: an older version, for tests of upgrades); refuses a schema from a
 * newer converge.
 */
export async function ensureSchema(client: pg.ClientBase, schema: string, upTo = SCHEMA_VERSION): Promise<void> {
  const q = client.escapeIdentifier(schema);
  const seen = await currentVersion(client, q);
  if (seen !== undefined && seen > SCHEMA_VERSION) throw tooNew(schema, seen);
  if (seen !== undefined && seen >= upTo) return;
  const [k1, k2] = advisoryKey("migrate", schema);
  await inTransaction(client, async () => {
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [k1, k2]);
    // Created only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when
    // the schema exists, and a DBA may have made it for a role that lacks it.
    const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${q}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${q}.schema_migrations (version integer PRIMARY KEY, applied ` +
        `timestamptz NOT NULL DEFAULT now(), converge_version text NOT NULL)`,
    );
    const now = (await currentVersion(client, q)) ?? 0;
    if (now > SCHEMA_VERSION) throw tooNew(schema, now);
    for (let v = now + 1; v <= upTo; v++) {
      await client.query(`SET LOCAL search_path TO ${q}`);
      for (const statement of MIGRATIONS[v - 1]!) await client.query(statement);
      await client.query(`INSERT INTO ${q}.schema_migrations (version, converge_version) VALUES ($1, $2)`, [
        v,
        TOOL_VERSION,
      ]);
      if (v === CLAIMS_VERSION) await backfillClaims(client, schema);
    }
  });
}
