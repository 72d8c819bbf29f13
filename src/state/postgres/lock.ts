// The (stack, workspace) lock on PostgreSQL: a session-level advisory lock held on a connection
// of its own for as long as the lock is held, plus a row in {schema}.locks naming the holder.
// The server releases an advisory lock when its session ends, so a killed converge's lock goes
// with its connection: no force-unlock is needed, and none can end a live holder's session.
// Transaction pooling (PgBouncer pool_mode=transaction) hands each statement to any server
// connection, which breaks session locks: it is detected and refused; session pooling works.
import { randomUUID } from "node:crypto";
import { hostname as osHostname } from "node:os";
import type pg from "pg";
import { pgModule } from "./pg.js";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { TOOL_VERSION } from "../../base/version.js";
import { sleep } from "../../fs/errors.js";
import { currentUser } from "../local/lock.js";
import type { LockHolder, StoreLock } from "../store.js";
import { pgFailure, type PgTarget, within } from "./connection.js";
import { advisoryHeld, advisoryKey } from "./keys.js";
import { dropReservations, type LockSession } from "./claims.js";

/** Where a lock lives: the schema's tables and the (stack, workspace) it guards. */
export interface LockScope {
  target: PgTarget;
  schema: string;
  stack: string;
  workspace: string;
  /** The store's describe(), for messages. */
  where: string;
}

export interface PgStoreLock extends StoreLock {
  /** Why the lock is no longer held (its connection closed), or undefined while it is. */
  lost(): string | undefined;
  /** The database session that holds it and the lock's key: the claims it reserves last as long. */
  session: LockSession;
}

/** A holder row and whether its session still holds the advisory lock. */
export interface HolderRow {
  id: string;
  who: string;
  host: string;
  pid: number;
  operation: string;
  since: Date;
  converge_version: string;
  backend_pid: number;
  /** When the holder's session started: with backend_pid, the session (pids are reused). */
  backend_start: Date | null;
  live: boolean;
  /** Recorded by the session reading it (same pid, same start: pids are reused). */
  mine: boolean;
}

const SESSION_START = "(SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())";

/** Whether `session` holds its lock now, as the server sees it (in the caller's transaction). */
export async function sessionHoldsLock(client: pg.ClientBase, session: LockSession): Promise<boolean> {
  const r = await client.query<{ held: boolean }>(`SELECT ${advisoryHeld("$1", "$2", "$3")} AS held`, [
    ...session.key,
    session.pid,
  ]);
  return r.rows[0]?.held === true;
}

/** How long a release waits for the server: a silent connection is then closed (the server
 *  releases the lock with the session, if it has not already). */
const RELEASE_TIMEOUT_MS = 10_000;

/** The holder row of the scope's lock (undefined: none), and whether it is live. */
export async function readHolder(client: pg.ClientBase | pg.Pool, scope: LockScope): Promise<HolderRow | undefined> {
  const [k1, k2] = advisoryKey(scope.schema, scope.stack, scope.workspace);
  const q = pgModule().escapeIdentifier(scope.schema);
  const r = await client.query<HolderRow>(
    `SELECT l.*, ${advisoryHeld("$1", "$2", "l.backend_pid")} AS live,
       (l.backend_pid = ` +
      `pg_backend_pid() AND l.backend_start IS NOT DISTINCT FROM ${SESSION_START}) AS mine FROM ${q}.locks l ` +
      `WHERE l.stack = $3 AND l.workspace = $4`,
    [k1, k2, scope.stack, scope.workspace],
  );
  return r.rows[0];
}

function holderOf(row: HolderRow): LockHolder {
  return {
    id: row.id,
    who: row.who,
    operation: row.operation,
    since: new Date(row.since).toISOString(),
    version: row.converge_version,
  };
}

/** "alice@laptop (apply, pid 123, since …)" */
export function describeHolder(row: HolderRow): string {
  return `${row.who} (${row.operation}, pid ${row.pid}, since ${new Date(row.since).toISOString()})`;
}

function lockedError(scope: LockScope, row: HolderRow | undefined, timeoutMs: number, waitedMs: number): UserError {
  const wait =
    timeoutMs > 0 ? `Waited ${(waitedMs / 1000).toFixed(1)}s for the lock.` : "Use --lock-timeout to wait for it.";
  const summary = row
    ? `state is locked by ${describeHolder(row)}; lock ID ${row.id}`
    : "state is locked by another PostgreSQL session that has not recorded its holder (yet)";
  const how = row
    ? `The lock belongs to that process's database session (backend pid ${row.backend_pid}` +
      `${row.converge_version ? `, converge ${row.converge_version}` : ""}): it is released when the process ` +
      `ends or its connection closes, also when it is killed, so no force-unlock is needed.`
    : "The lock is released when the session that holds it ends.";
  return new UserError(error(summary, { code: "state/locked", file: scope.where, detail: `${wait} ${how}` }));
}

function transactionPooling(scope: LockScope): UserError {
  return new UserError(
    error(
      `cannot hold the state lock of ${scope.where}: the lock taken on the connection is not held by the ` +
        `session that follows — is the connection going through a transaction-pooling proxy (PgBouncer ` +
        `pool_mode=transaction)?`,
      {
        code: "state/postgres-pooling",
        file: scope.where,
        detail:
          "converge locks with a session-level advisory lock on a connection it keeps open while it works. " +
          "Transaction pooling is not supported: connect directly to PostgreSQL, or through PgBouncer in " +
          "session mode (pool_mode=session).",
      },
    ),
  );
}

/** Tries the advisory lock once on `client`; true when taken (and verified to stay with the session). */
async function tryTake(client: pg.Client, scope: LockScope, key: [number, number]): Promise<boolean> {
  const first = await client.query<{ ok: boolean; pid: number }>(
    "SELECT pg_try_advisory_lock($1, $2) AS ok, pg_backend_pid() AS pid",
    key,
  );
  const { ok, pid } = first.rows[0]!;
  if (!ok) return false;
  const check = await client.query<{ held: boolean; pid: number }>(
    `SELECT ${advisoryHeld("$1", "$2", "pg_backend_pid()")} AS held, pg_backend_pid() AS pid`,
    key,
  );
  // The lock must stay with the session that took it, and no other holder may have recorded this
  // very session: a pooler that shares server sessions between clients would hand it the lock
  // (advisory locks are re-entrant within a session).
  const recorded = check.rows[0]!.held ? await readHolder(client, scope) : undefined;
  if (!check.rows[0]!.held || check.rows[0]!.pid !== pid || (recorded?.live && recorded.mine)) {
    await client.query("SELECT pg_advisory_unlock($1, $2)", key).catch(() => undefined);
    throw transactionPooling(scope);
  }
  return true;
}

async function recordHolder(client: pg.Client, scope: LockScope, operation: string): Promise<HolderRow> {
  const q = client.escapeIdentifier(scope.schema);
  const host = osHostname();
  const r = await client.query<HolderRow>(
    `INSERT INTO ${q}.locks (stack, workspace, id, who, host, pid, operation, since, converge_version, ` +
      `backend_pid, backend_start)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8, pg_backend_pid(), ` +
      `${SESSION_START})
     ON CONFLICT (stack, workspace) DO UPDATE SET id = EXCLUDED.id, who = ` +
      `EXCLUDED.who, host = EXCLUDED.host, pid = EXCLUDED.pid,
       operation = EXCLUDED.operation, since = ` +
      `EXCLUDED.since, converge_version = EXCLUDED.converge_version, backend_pid = EXCLUDED.backend_pid,
      ` +
      ` backend_start = EXCLUDED.backend_start
     RETURNING *, true AS live, true AS mine`,
    [
      scope.stack,
      scope.workspace,
      randomUUID(),
      `${currentUser()}@${host}`,
      host,
      process.pid,
      operation,
      TOOL_VERSION,
    ],
  );
  return r.rows[0]!;
}

/** A holder row that names no live session belongs to a holder that is gone, or one still writing it. */
const UNRECORDED_GRACE_MS = 2_000;

/** Takes the lock of `scope` for `operation`, waiting up to `timeoutMs` (default: fail at once). */
export async function acquirePgLock(scope: LockScope, operation: string, timeoutMs = 0): Promise<PgStoreLock> {
  const started = Date.now();
  const deadline = started + Math.max(0, timeoutMs);
  const key = advisoryKey(scope.schema, scope.stack, scope.workspace);
  const client = new (pgModule().Client)(scope.target.config);
  let lost: string | undefined;
  client.on("error", (e) => (lost ??= e.message));
  client.on("end", () => (lost ??= "the connection closed"));
  try {
    await client.connect();
    for (;;) {
      if (await tryTake(client, scope, key)) break;
      const row = await readHolder(client, scope);
      const now = Date.now();
      const unknown = !row?.live && now - started < UNRECORDED_GRACE_MS;
      if (now >= deadline && !unknown) throw lockedError(scope, row?.live ? row : undefined, timeoutMs, now - started);
      await sleep(unknown ? 50 : Math.min(100 + Math.random() * 150, Math.max(0, deadline - now)));
    }
    const row = await recordHolder(client, scope, operation);
    // A holder that is gone may have left reservations: this lock's start with none.
    await dropReservations(client, scope.schema, scope.stack, scope.workspace);
    return pgLockHandle(client, scope, key, row, () => lost);
  } catch (e) {
    await client.end().catch(() => undefined);
    throw pgFailure(e, "take the state lock", scope.target, scope.where);
  }
}

function pgLockHandle(
  client: pg.Client,
  scope: LockScope,
  key: [number, number],
  row: HolderRow,
  lost: () => string | undefined,
): PgStoreLock {
  let releasing: Promise<void> | undefined;
  const release = async (): Promise<void> => {
    if (lost() === undefined) {
      // The session ends below, and the server releases whatever it still held: a failure or a
      // silent connection (a query still waiting then is cut off by end()) loses nothing.
      await within(RELEASE_TIMEOUT_MS, async () => {
        // What an apply reserved goes with the lock (a dead session's reservations count for nothing).
        await dropReservations(client, scope.schema, scope.stack, scope.workspace);
        await client.query(
          `DELETE FROM ${client.escapeIdentifier(scope.schema)}.locks WHERE stack = $1 AND workspace = $2 AND id = $3`,
          [scope.stack, scope.workspace, row.id],
        );
        await client.query("SELECT pg_advisory_unlock($1, $2)", key);
      }).catch(() => undefined);
    }
    await client.end().catch(() => undefined);
  };
  return {
    holder: holderOf(row),
    session: { pid: row.backend_pid, key },
    lost: () => (releasing ? undefined : lost()),
    release(): Promise<void> {
      releasing ??= release();
      return releasing;
    },
  };
}
