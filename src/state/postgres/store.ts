// The PostgreSQL state backend: one row per (stack, workspace) in {schema}.states, every version
// in {schema}.history, pending write intents in {schema}.intents, the lock in locks.ts.
// Constructing a store does no I/O: it connects on its first call (and creates or checks the
// tables then), so choosing the backend stays cheap.
import type pg from "pg";
import { pgModule } from "./pg.js";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import type { State, WriteIntent } from "../../generated/schemas.js";
import { describeErrors } from "../../schemas/index.js";
import { parsedState, parseState, serializeState, stateProblems } from "../format.js";
import { claimConflictError, type ClaimConflict, type ResourceClaim } from "../../claims/claims.js";
import {
  type ClaimRegistry,
  type HistoryRecord,
  stateConflict,
  type StateStore,
  type StateVersion,
  type WriteMeta,
} from "../store.js";
import { DEFAULT_WORKSPACE, missingWorkspace } from "../workspace.js";
import {
  claimedProjectNumbers,
  conflictsWith,
  everyClaim,
  lockClaims,
  newClaimConflicts,
  replaceClaims,
  reserveClaims,
} from "./claims.js";
import {
  connectionFromEnv,
  inTransaction,
  pgFailure,
  type PgTarget,
  rollback,
  withPoolClient,
  within,
} from "./connection.js";
import { driftLog, type DriftLog, importVersions, readHistory, readVersion, recordVersion } from "./history.js";
import {
  acquirePgLock,
  describeHolder,
  type LockScope,
  type PgStoreLock,
  readHolder,
  sessionHoldsLock,
} from "./lock.js";
import { ensureSchema } from "./migrations.js";
import type { ProjectIds } from "../../cloud/names.js";
import { type FencedStore, fenceFrom, MIGRATE_OPERATION, type MoveFence, movingError } from "../move-fence.js";

export const DEFAULT_PG_SCHEMA = "converge";

export interface PostgresStoreOptions {
  stack: string;
  /** Default "converge". */
  schema?: string;
  /** Default "default". */
  workspace?: string;
  /** The environment the connection comes from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** How long a query of the state, claims or history may wait for its answer (default 2
   *  minutes): a connection that died without a word (a NAT or firewall that dropped the flow)
   *  fails the command instead of hanging it. The lock's own waits have --lock-timeout. */
  queryTimeoutMs?: number;
}

/** PostgresStoreOptions.queryTimeoutMs's default: a large state's write takes seconds, not minutes. */
const PG_QUERY_TIMEOUT_MS = 120_000;
/** A stored state that cannot be used: PostgreSQL keeps every version (there is no .backup file). */
const STORED = {
  label: "stored state",
  advice:
    "PostgreSQL keeps every version written: `converge state history` lists " +
    "them, `converge state pull --serial N` prints one; " +
    "once a good version is chosen (it may be behind the cloud: run plan afterwards), " +
    "`converge state push FILE` replaces the stored state with it.",
};

/** The most intents one INSERT takes (2 parameters each; PostgreSQL takes up to 65,535 a statement). */
const INTENTS_PER_INSERT = 1_000;

/** How long closing waits for the pool's connections to end before it leaves them. */
const CLOSE_WAIT_MS = 5_000;

export class PostgresStateStore implements StateStore, FencedStore {
  private readonly scope: LockScope;
  private pool: pg.Pool | undefined;
  private ready: Promise<pg.Pool> | undefined;
  /** The lock this store holds, if any: a write after it was lost is refused. */
  private held: { lock: PgStoreLock; operation: string } | undefined;
  private readonly queryTimeoutMs: number;

  constructor(opts: PostgresStoreOptions) {
    this.queryTimeoutMs = opts.queryTimeoutMs ?? PG_QUERY_TIMEOUT_MS;
    const schema = opts.schema ?? DEFAULT_PG_SCHEMA;
    const workspace = opts.workspace ?? DEFAULT_WORKSPACE;
    const target: PgTarget = connectionFromEnv(opts.env);
    const where = `postgres (schema ${schema}) stack "${opts.stack}" workspace "${workspace}"`;
    this.scope = { target, schema, stack: opts.stack, workspace, where };
  }

  describe(): string {
    return this.scope.where;
  }

  /** The pool, once the tables exist (created on first use). */
  private db(): Promise<pg.Pool> {
    this.ready ??= (async () => {
      // allowExitOnIdle: an idle connection never keeps the command from exiting.
      const pool = new (pgModule().Pool)({
        ...this.scope.target.config,
        max: 2,
        idleTimeoutMillis: 5_000,
        allowExitOnIdle: true,
        query_timeout: this.queryTimeoutMs,
      });
      pool.on("error", () => undefined); // an idle client's failure surfaces on the next query
      this.pool = pool;
      await withPoolClient(pool, async (client) => {
        await ensureSchema(client, this.scope.schema);
        await this.checkWorkspace(client);
      });
      return pool;
    })().catch((e: unknown) => {
      this.ready = undefined;
      throw this.failure(e, "open the state");
    });
    return this.ready;
  }

  /** A workspace other than `default` must have been made with `workspace new`. */
  private async checkWorkspace(client: pg.PoolClient): Promise<void> {
    const { stack, workspace, where } = this.scope;
    if (workspace === DEFAULT_WORKSPACE) return;
    const r = await client.query(`SELECT 1 FROM ${this.q}.workspaces WHERE stack = $1 AND workspace = $2`, [
      stack,
      workspace,
    ]);
    if (r.rowCount === 0) throw missingWorkspace(workspace, where);
  }

  /**
   * Runs `fn` on the schema's pool (also for the stack's workspace catalog); a failure is a user error naming `action`.
   */
  async query<T>(action: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
    const pool = await this.db();
    try {
      return await fn(pool);
    } catch (e) {
      throw this.failure(e, action);
    }
  }

  history(): Promise<HistoryRecord[]> {
    return this.query("read the history", (db) =>
      readHistory(db, this.scope.schema, this.scope.stack, this.scope.workspace),
    );
  }

  get drift(): DriftLog {
    return driftLog(this.scope, (action, fn) => this.query(action, fn));
  }

  async version(serial: number): Promise<State | undefined> {
    const current = await this.read();
    if (current?.serial === serial) return current;
    const text = await this.query("read the history", (db) =>
      readVersion(db, this.scope.schema, this.scope.stack, this.scope.workspace, serial, current?.lineage),
    );
    return text === undefined ? undefined : parseState(text, `${this.scope.where} serial ${serial}`, STORED);
  }

  /** Cross-stack claims, kept in {schema}.claims (./claims.ts). */
  get claims(): ClaimRegistry {
    const { schema, stack, workspace } = this.scope;
    return {
      conflicts: (claims, projectIds) =>
        this.query("read the claims", (db) => conflictsWith(db, schema, stack, workspace, claims, projectIds)),
      reserve: (claims, projectIds) => this.reserveClaims(claims, projectIds),
      projectNumbers: () => this.query("read the claims", (db) => claimedProjectNumbers(db, schema)),
      all: () => this.query("read the claims", (db) => everyClaim(db, schema)),
    };
  }

  private async reserveClaims(claims: readonly ResourceClaim[], projectIds?: ProjectIds): Promise<ClaimConflict[]> {
    const held = this.held?.lock;
    if (!held) throw new Error(`reserving claims needs the state lock of ${this.scope.where}`);
    const { schema, stack, workspace } = this.scope;
    return this.query("record the claims", (db) =>
      withPoolClient(db, (client) => reserveClaims(client, schema, stack, workspace, held.session, claims, projectIds)),
    );
  }

  private failure(e: unknown, action: string): UserError {
    return pgFailure(e, action, this.scope.target, this.scope.where);
  }

  private get q(): string {
    return pgModule().escapeIdentifier(this.scope.schema);
  }

  async read(): Promise<State | undefined> {
    const pool = await this.db();
    let text: string | undefined;
    try {
      const r = await pool.query<{ text: string }>(
        `SELECT state::text AS text FROM ${this.q}.states WHERE stack = $1 AND workspace = $2`,
        [this.scope.stack, this.scope.workspace],
      );
      text = r.rows[0]?.text;
    } catch (e) {
      throw this.failure(e, "read the state");
    }
    return text === undefined ? undefined : parseState(text, this.scope.where, STORED);
  }

  async write(next: State, expect: StateVersion | undefined, meta: WriteMeta = {}): Promise<State> {
    const invalid = stateProblems(next);
    if (invalid.length > 0)
      throw new Error(`refusing to write an invalid state to ${this.scope.where}: ${describeErrors(invalid)}`);
    if (next.stack !== this.scope.stack)
      throw new Error(`refusing to write a state of stack "${next.stack}" to ${this.scope.where}`);
    const lost = this.held?.lock.lost();
    if (lost !== undefined) throw this.lockLost(lost);
    const pool = await this.db();
    try {
      return await withPoolClient(pool, async (client) => {
        try {
          return await this.swap(client, next, expect, {
            ...meta,
            operation: meta.operation ?? this.held?.operation ?? "write",
          });
        } catch (e) {
          await rollback(client, e);
          throw e;
        }
      });
    } catch (e) {
      throw this.failure(e, "write the state");
    }
  }

  private lockLost(why: string): UserError {
    return new UserError(
      error(`the state lock of ${this.scope.where} was lost (${why}); nothing more is written`, {
        code: "state/lock-lost",
        file: this.scope.where,
        detail:
          "The connection that held the lock closed (a server restart, a failover, a network cut), so " +
          "another converge may be writing now. The state keeps what was saved before; run the command " +
          "again: it reads the current state first.",
      }),
    );
  }

  /** The stored version (`FOR UPDATE`: locked until the transaction ends). */
  private async stored(
    client: pg.PoolClient,
    lock: "FOR UPDATE" | "",
  ): Promise<(StateVersion & { stack: string }) | undefined> {
    const { stack, workspace } = this.scope;
    const r = await client.query<{ lineage: string; serial: string }>(
      `SELECT lineage, serial FROM ${this.q}.states WHERE stack = $1 AND workspace = $2 ${lock}`,
      [stack, workspace],
    );
    const row = r.rows[0];
    return row ? { lineage: row.lineage, serial: Number(row.serial), stack } : undefined;
  }

  /** Compare-and-swap in one transaction: the row locked, compared, replaced, the version recorded. */
  private async swap(
    client: pg.PoolClient,
    next: State,
    expect: StateVersion | undefined,
    meta: WriteMeta & { operation: string },
  ): Promise<State> {
    const { stack, workspace, where, schema } = this.scope;
    await client.query("BEGIN");
    const current = await this.stored(client, "FOR UPDATE");
    // The lock's connection may have gone silent (a NAT that dropped it, a partition) while the
    // server ended its session: the server says whether the lock is still this store's.
    const held = this.held?.lock;
    if (held && !(await sessionHoldsLock(client, held.session)))
      throw this.lockLost("the server no longer holds it for this converge's session");
    if (current && current.lineage !== next.lineage)
      throw stateConflict(where, current, { lineage: next.lineage, serial: next.serial }, next, "database");
    if (current ? !expect || current.lineage !== expect.lineage || current.serial !== expect.serial : expect) {
      throw stateConflict(where, current ?? { lineage: next.lineage, serial: 0 }, expect, next, "database");
    }
    const written: State = { ...next, serial: (expect?.serial ?? next.serial) + 1 };
    if (!Number.isSafeInteger(written.serial))
      throw new UserError(
        error(
          `the state in ${where} has serial ${written.serial - 1}, the largest ` +
            `converge can count: it cannot be written again`,
          { file: where },
        ),
      );
    const text = serializeState(written);
    const params = [stack, workspace, written.lineage, written.serial, text];
    if (current) {
      await client.query(
        `UPDATE ${this.q}.states SET lineage = $3, serial = $4, state = $5::json, ` +
          `updated = now() WHERE stack = $1 AND workspace = $2`,
        params,
      );
    } else {
      const ins = await client.query(
        `INSERT INTO ${this.q}.states (stack, workspace, lineage, serial, state) ` +
          `VALUES ($1, $2, $3, $4, $5::json) ON CONFLICT DO NOTHING`,
        params,
      );
      // Another writer created the first state between our read and our insert.
      if (ins.rowCount === 0) {
        await client.query("ROLLBACK");
        throw stateConflict(
          where,
          (await this.stored(client, "")) ?? { lineage: next.lineage, serial: 0 },
          expect,
          next,
          "database",
        );
      }
    }
    const run = this.held?.lock.holder.id;
    const version = {
      stack,
      workspace,
      lineage: written.lineage,
      serial: written.serial,
      text,
      operation: meta.operation,
      meta,
    };
    await recordVersion(client, schema, run === undefined ? version : { ...version, run });
    await this.recordClaims(client, written);
    await client.query("COMMIT");
    return parsedState(written);
  }

  /** Replaces the state's claims, in the write's transaction under the claims lock; refused when
   *  it adds a grant another stack or workspace claims (a push of an old version, an import, a migration). */
  private async recordClaims(client: pg.PoolClient, written: State): Promise<void> {
    const { stack, workspace, where, schema } = this.scope;
    await lockClaims(client, schema);
    const conflicts = await newClaimConflicts(client, schema, stack, workspace, written);
    if (conflicts.length) throw claimConflictError(conflicts, where);
    await replaceClaims(client, schema, stack, workspace, written);
  }

  async lock(operation: string, opts?: { timeoutMs?: number }): Promise<PgStoreLock> {
    await this.db(); // the tables first: the lock writes its holder row
    const lock = await acquirePgLock(this.scope, operation, opts?.timeoutMs ?? 0);
    // A state a migrate is moving away takes no other command's lock (../move-fence.ts).
    const fence =
      operation === MIGRATE_OPERATION
        ? undefined
        : await this.movingTo().catch(async (e: unknown) => {
            await lock.release();
            throw e;
          });
    if (fence) {
      await lock.release();
      throw movingError(this.scope.where, fence);
    }
    const held = { lock, operation };
    this.held = held;
    return {
      holder: lock.holder,
      session: lock.session,
      lost: () => lock.lost(),
      release: async () => {
        if (this.held === held) this.held = undefined;
        await lock.release();
      },
    };
  }

  /** The row of {schema}.moves: the fence of an unfinished `state migrate`. */
  movingTo(): Promise<MoveFence | undefined> {
    return this.query("read the migration fence", async (db) => {
      const sql = `SELECT lineage, serial, target, since FROM ${this.q}.moves WHERE stack = $1 AND workspace = $2`;
      type Row = { lineage: string; serial: string; target: string; since: Date };
      const r = await db.query<Row>(sql, [this.scope.stack, this.scope.workspace]);
      const row = r.rows[0];
      const since = row && new Date(row.since).toISOString();
      return row && fenceFrom({ lineage: row.lineage, serial: Number(row.serial), to: row.target, since });
    });
  }

  async fenceForMove(fence: MoveFence): Promise<void> {
    const { stack, workspace } = this.scope;
    const params = [stack, workspace, fence.lineage, fence.serial, fence.to, fence.since];
    const sql = `INSERT INTO ${this.q}.moves (stack, workspace, lineage, serial, target, since)
      VALUES ($1, $2, $3, $4, $5, $6)`;
    await this.query("record the migration fence", (db) => db.query(`${sql} ON CONFLICT DO NOTHING`, params));
  }

  /**
   * Versions of another backend's state (a local state's previous version, kept as its .backup)
   * added to this workspace's history with `operation`, each once: a version whose lineage and
   * serial the history holds already is left out.
   */
  async importHistory(versions: readonly State[], operation: string): Promise<number> {
    const { stack, workspace, schema } = this.scope;
    const add = (client: pg.PoolClient) => importVersions(client, schema, { stack, workspace }, versions, operation);
    return this.query("record the history", (db) =>
      withPoolClient(db, (client) => inTransaction(client, () => add(client))),
    );
  }

  /**
   * Write-ahead intents (../../apply/intents.ts), rows of {schema}.intents: committed before this
   * returns, in one transaction. Under a lock that was lost (its connection closed, or the server
   * no longer holds it for this session) nothing is recorded: the cloud writes they describe must
   * not start. An intent recorded again under its ID keeps its place, with the new body.
   */
  async recordIntents(intents: readonly WriteIntent[]): Promise<void> {
    if (!intents.length) return;
    const lost = this.held?.lock.lost();
    if (lost !== undefined) throw this.lockLost(lost);
    const byId = new Map<string, WriteIntent>();
    for (const i of intents) byId.set(i.id, i);
    const rows = [...byId.values()];
    const { stack, workspace } = this.scope;
    const pool = await this.db();
    try {
      await withPoolClient(pool, (client) =>
        inTransaction(client, async () => {
          const held = this.held?.lock;
          if (held && !(await sessionHoldsLock(client, held.session)))
            throw this.lockLost("the server no longer holds it for this converge's session");
          for (let at = 0; at < rows.length; at += INTENTS_PER_INSERT) {
            const chunk = rows.slice(at, at + INTENTS_PER_INSERT);
            // One VALUES list: its rows take their seq in the order they are listed.
            const values = chunk.map((_, k) => `($1, $2, $${2 * k + 3}, $${2 * k + 4}::json)`).join(", ");
            const params = [stack, workspace, ...chunk.flatMap((i) => [i.id, JSON.stringify(i)])];
            await client.query(
              `INSERT INTO ${this.q}.intents (stack, workspace, id, body) VALUES ${values} ON CONFLICT ` +
                `(stack, workspace, id) DO UPDATE SET body = EXCLUDED.body`,
              params,
            );
          }
        }),
      );
    } catch (e) {
      throw this.failure(e, "record the write intents");
    }
  }

  /** The intents of this stack and workspace not cleared yet, in the order they were recorded. */
  pendingIntents(): Promise<WriteIntent[]> {
    return this.query("read the write intents", async (db) => {
      const r = await db.query<{ text: string }>(
        `SELECT body::text AS text FROM ${this.q}.intents WHERE stack = $1 AND workspace = $2 ORDER BY seq`,
        [this.scope.stack, this.scope.workspace],
      );
      return r.rows.map((row) => JSON.parse(row.text) as WriteIntent);
    });
  }

  async clearIntents(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.query("clear the write intents", (db) =>
      db.query(`DELETE FROM ${this.q}.intents WHERE stack = $1 AND workspace = $2 AND id = ANY($3::text[])`, [
        this.scope.stack,
        this.scope.workspace,
        [...ids],
      ]),
    );
  }

  /**
   * Removes a holder row left behind by a session that is gone. A live holder's lock belongs to
   * its database session: converge ends no session, so it is refused with how it goes away.
   */
  async forceUnlock(id: string): Promise<void> {
    const pool = await this.db();
    const where = this.scope.where;
    let row;
    try {
      row = await readHolder(pool, this.scope);
    } catch (e) {
      throw this.failure(e, "read the state lock");
    }
    if (!row || (!row.live && row.id !== id)) {
      throw new UserError(
        error(`no lock: the state ${where} is not locked`, {
          file: where,
          detail:
            "On PostgreSQL a killed holder's lock is released with its database session: nothing needs unlocking.",
        }),
      );
    }
    if (row.id !== id) {
      throw new UserError(
        error(
          `lock ID ${id} does not match the current lock: the state is locked by ` +
            `${describeHolder(row)} with lock ID ${row.id}`,
          { file: where },
        ),
      );
    }
    if (row.live) {
      throw new UserError(
        error(
          `the state lock ${id} is held by a live PostgreSQL session of ` +
            `${describeHolder(row)}: force-unlock cannot release it`,
          {
            code: "state/locked",
            file: where,
            detail:
              `The lock belongs to that converge process's database session (backend pid ${row.backend_pid}) ` +
              `and is released when the process ends or its connection closes, also when it is killed: stop ` +
              `that process. converge never ends another session; a database administrator can, with SELECT ` +
              `pg_terminate_backend(${row.backend_pid}).`,
          },
        ),
      );
    }
    await pool
      .query(`DELETE FROM ${this.q}.locks WHERE stack = $1 AND workspace = $2 AND id = $3`, [
        this.scope.stack,
        this.scope.workspace,
        id,
      ])
      .catch((e: unknown) => {
        throw this.failure(e, "remove the lock record");
      });
  }

  /** Closes the pool (tests; a command exits without it). */
  async close(): Promise<void> {
    this.ready = undefined;
    const pool = this.pool;
    this.pool = undefined;
    await this.held?.lock.release();
    // A connection that died without a word never answers its end: the pool is left to the process's exit.
    if (pool) await within(CLOSE_WAIT_MS, () => pool.end()).catch(() => undefined);
  }
}

export function postgresStateStore(opts: PostgresStoreOptions): PostgresStateStore {
  return new PostgresStateStore(opts);
}
