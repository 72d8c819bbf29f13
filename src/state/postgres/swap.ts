// A write of a PostgreSQL state: the compare-and-swap of its row of {schema}.states in one
// transaction (the row locked, compared, replaced), with the version recorded in the history and
// the state's claims replaced; and the refusal of a write whose lock was lost.
import type pg from "pg";
import { pgModule } from "./pg.js";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import type { State } from "../../generated/schemas.js";
import { parsedState, serializeState } from "../format.js";
import { claimConflictError } from "../../claims/claims.js";
import { stateConflict, type StateVersion, type WriteMeta } from "../store.js";
import { lockClaims, newClaimConflicts, replaceClaims } from "./claims.js";
import { recordVersion } from "./history.js";
import { type LockScope, type PgStoreLock, sessionHoldsLock } from "./lock.js";

/** A write (or intents' record) refused because the lock of the state at `where` was lost (`why`). */
export function lockLostError(where: string, why: string): UserError {
  return new UserError(
    error(`the state lock of ${where} was lost (${why}); nothing more is written`, {
      code: "state/lock-lost",
      file: where,
      detail:
        "The connection that held the lock closed (a server restart, a failover, a network cut), so " +
        "another converge may be writing now. The state keeps what was saved before; run the command " +
        "again: it reads the current state first.",
    }),
  );
}

/** The stored version (`FOR UPDATE`: locked until the transaction ends). */
async function storedVersion(
  client: pg.PoolClient,
  scope: LockScope,
  lock: "FOR UPDATE" | "",
): Promise<(StateVersion & { stack: string }) | undefined> {
  const { stack, workspace } = scope;
  const r = await client.query<{ lineage: string; serial: string }>(
    `SELECT lineage, serial FROM ${pgModule().escapeIdentifier(scope.schema)}.states ` +
      `WHERE stack = $1 AND workspace = $2 ${lock}`,
    [stack, workspace],
  );
  const row = r.rows[0];
  return row ? { lineage: row.lineage, serial: Number(row.serial), stack } : undefined;
}

/**
 * Compare-and-swap in one transaction (`client` in none yet): the row locked, compared, replaced,
 * the version recorded. `held` is the store's lock, if any: a write under a lost lock is refused.
 */
export async function swapState(
  client: pg.PoolClient,
  scope: LockScope,
  next: State,
  expect: StateVersion | undefined,
  meta: WriteMeta & { operation: string },
  held: PgStoreLock | undefined,
): Promise<State> {
  const { stack, workspace, where, schema } = scope;
  const q = pgModule().escapeIdentifier(schema);
  await client.query("BEGIN");
  const current = await storedVersion(client, scope, "FOR UPDATE");
  // The lock's connection may have gone silent (a NAT that dropped it, a partition) while the
  // server ended its session: the server says whether the lock is still this store's.
  if (held && !(await sessionHoldsLock(client, held.session)))
    throw lockLostError(where, "the server no longer holds it for this converge's session");
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
      `UPDATE ${q}.states SET lineage = $3, serial = $4, state = $5::json, ` +
        `updated = now() WHERE stack = $1 AND workspace = $2`,
      params,
    );
  } else {
    const ins = await client.query(
      `INSERT INTO ${q}.states (stack, workspace, lineage, serial, state) ` +
        `VALUES ($1, $2, $3, $4, $5::json) ON CONFLICT DO NOTHING`,
      params,
    );
    // Another writer created the first state between our read and our insert.
    if (ins.rowCount === 0) {
      await client.query("ROLLBACK");
      const now = (await storedVersion(client, scope, "")) ?? { lineage: next.lineage, serial: 0 };
      throw stateConflict(where, now, expect, next, "database");
    }
  }
  const run = held?.holder.id;
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
  await recordClaims(client, scope, written);
  await client.query("COMMIT");
  return parsedState(written);
}

/** Replaces the state's claims, in the write's transaction under the claims lock; refused when
 *  it adds a grant another stack or workspace claims (a push of an old version, an import, a migration). */
async function recordClaims(client: pg.PoolClient, scope: LockScope, written: State): Promise<void> {
  const { stack, workspace, where, schema } = scope;
  await lockClaims(client, schema);
  const conflicts = await newClaimConflicts(client, schema, stack, workspace, written);
  if (conflicts.length) throw claimConflictError(conflicts, where);
  await replaceClaims(client, schema, stack, workspace, written);
}
