// The PostgreSQL state backend: one row per (stack, workspace) in {schema}.states, every version
// in {schema}.history, pending write intents in {schema}.intents, the lock in locks.ts.
// Constructing a store does no I/O: it connects on its first call (and creates or checks the
// tables then), so choosing the backend stays cheap.
import type pg from "pg";
import { pgModule } from "./pg.js";
import type { UserError } from "../../diagnostics/diagnostic.js";
import type { State, WriteIntent } from "../../generated/schemas.js";
import { describeErrors } from "../../schemas/index.js";
import { stateProblems } from "../format.js";
import { parseState } from "../parse-state.js";
import type { ClaimConflict, ResourceClaim } from "../../claims/claims.js";
import type { ClaimRegistry, HistoryRecord, StateStore, StateVersion, WriteMeta } from "../store.js";
import { DEFAULT_WORKSPACE, missingWorkspace } from "../workspace.js";
import { claimedProjectNumbers, conflictsWith, everyClaim, reserveClaims } from "./claims.js";
import {
  connectionFromEnv,
  inTransaction,
  pgFailure,
  type PgTarget,
  rollback,
  withPoolClient,
  within,
} from "./connection.js";
import { driftLog, type DriftLog, importVersions, readHistory, readVersion } from "./history.js";
import { acquirePgLock, type LockScope, type PgStoreLock, readHolder, sessionHoldsLock } from "./lock.js";
import { ensureSchema } from "./migrations.js";
import type { ProjectIds } from "../../cloud/names.js";
import { type FencedStore, fenceFrom, type MoveFence, refuseWhileMoving } from "../move-fence.js";
import { lockLostError, swapState } from "./swap.js";
import { deleteIntents, insertIntents, readIntents } from "./intents.js";
import { forceUnlockRefusal } from "./force-unlock.js";

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
          const operation = meta.operation ?? this.held?.operation ?? "write";
          return await swapState(client, this.scope, next, expect, { ...meta, operation }, this.held?.lock);
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
    return lockLostError(this.scope.where, why);
  }

  async lock(operation: string, opts?: { timeoutMs?: number }): Promise<PgStoreLock> {
    await this.db(); // the tables first: the lock writes its holder row
    const lock = await acquirePgLock(this.scope, operation, opts?.timeoutMs ?? 0);
    await refuseWhileMoving(
      operation,
      () => this.movingTo(),
      () => lock.release(),
      this.scope.where,
    );
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
    const pool = await this.db();
    try {
      await withPoolClient(pool, (client) =>
        inTransaction(client, async () => {
          const held = this.held?.lock;
          if (held && !(await sessionHoldsLock(client, held.session)))
            throw this.lockLost("the server no longer holds it for this converge's session");
          await insertIntents(client, this.scope, intents);
        }),
      );
    } catch (e) {
      throw this.failure(e, "record the write intents");
    }
  }

  /** The intents of this stack and workspace not cleared yet, in the order they were recorded. */
  pendingIntents(): Promise<WriteIntent[]> {
    return this.query("read the write intents", (db) => readIntents(db, this.scope));
  }

  async clearIntents(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.query("clear the write intents", (db) => deleteIntents(db, this.scope, ids));
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
    const refusal = forceUnlockRefusal(row, id, where);
    if (refusal) throw refusal;
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
