// The claims table on PostgreSQL: each (stack, workspace) state's claims, replaced inside the
// transaction that writes the state, an apply's reservations of what it is about to claim, and
// the query that finds other owners of a plan's objects. Every writer of claims or reservations
// takes the schema's claims lock in its transaction: checking and recording are one step, so
// two stacks applying at once cannot both take one grant.
import type pg from "pg";
import { pgModule } from "./pg.js";
import type { Claim } from "../../drivers/types.js";
import type { State } from "../../generated/schemas.js";
import {
  claimColumns,
  claimConflicts,
  type ClaimConflict,
  type OwnedClaim,
  type ResourceClaim,
  stateClaims,
} from "../../claims/claims.js";
import { advisoryHeld, advisoryKey } from "./keys.js";
import { inTransaction } from "./connection.js";
import { nameWithProjectId, type ProjectIds } from "../../cloud/names.js";

type Db = pg.ClientBase | pg.Pool;

/** The session holding a (stack, workspace) lock: its reservations count while it holds it. */
export interface LockSession {
  pid: number;
  key: [number, number];
}

const q = (schema: string): string => pgModule().escapeIdentifier(schema);

/** Serialises the claims of `schema`'s writers until the caller's transaction ends. */
export async function lockClaims(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1, $2)", advisoryKey("claims", schema));
}

/** The rows of `claims` (address, the key columns, the claim's JSON), each once. */
function claimRows(claims: readonly ResourceClaim[]): string[][] {
  const seen = new Set<string>();
  const rows: string[][] = [];
  for (const { address, claim } of claims) {
    const c = claimColumns(claim);
    const key = JSON.stringify([address, c]);
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push([address, c.object, c.scope, c.role, c.conditionKey, c.memberKey, JSON.stringify(claim)]);
  }
  return rows;
}

/**
 * Inserts `rows` for (stack, workspace) into `table` in one statement (arrays unnested server-side); `extra` fills the
 * columns after `claim`.
 */
async function insertRows(
  client: pg.ClientBase,
  table: string,
  stack: string,
  workspace: string,
  rows: string[][],
  extra: { columns: string; values: unknown[] } = { columns: "", values: [] },
): Promise<void> {
  if (rows.length === 0) return;
  const col = (i: number) => rows.map((r) => r[i]);
  const more = extra.values.map((_, i) => `, $${10 + i}`).join("");
  await client.query(
    `INSERT INTO ${table} (stack, workspace, address, object, scope, role, condition_key, member_key, claim` +
      `${extra.columns})
     SELECT $1, $2, a, o, s, r, ck, mk, c::json${more} FROM unnest($3::text[], ` +
      `$4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS t(a, o, s, r, ck, mk, c)`,
    [stack, workspace, col(0), col(1), col(2), col(3), col(4), col(5), col(6), ...extra.values],
  );
}

/** Replaces the claims of (stack, workspace) with those of `state` (none: undefined), in the caller's transaction. */
export async function replaceClaims(
  client: pg.ClientBase,
  schema: string,
  stack: string,
  workspace: string,
  state: State | undefined,
): Promise<void> {
  await client.query(`DELETE FROM ${q(schema)}.claims WHERE stack = $1 AND workspace = $2`, [stack, workspace]);
  await insertRows(client, `${q(schema)}.claims`, stack, workspace, claimRows(state ? stateClaims(state) : []));
}

interface ClaimRow {
  stack: string;
  workspace: string;
  address: string;
  claim: Claim;
  pending: boolean;
}

const owned = (r: ClaimRow): OwnedClaim => ({
  stack: r.stack,
  workspace: r.workspace,
  address: r.address,
  claim: r.claim,
  ...(r.pending ? { pending: true } : {}),
});

/** A reservation counts while the session that made it holds its (stack, workspace) lock. */
const LIVE_RESERVATION = advisoryHeld("r.lock_k1", "r.lock_k2", "r.backend_pid");

/** The recorded claims, and the live reservations, of other (stack, workspace) states that conflict with `mine`.
 *  `projectIds` (project numbers → IDs): a claim recorded with a project's number (by an older
 *  converge, or a stack not yet applied since) is the claim of that project's ID. */
export async function conflictsWith(
  db: Db,
  schema: string,
  stack: string,
  workspace: string,
  mine: readonly ResourceClaim[],
  projectIds?: ProjectIds,
): Promise<ClaimConflict[]> {
  if (mine.length === 0) return [];
  const objects = withNumberForms([...new Set(mine.map((m) => m.claim.object))], projectIds);
  const other = "object = ANY($1::text[]) AND NOT (stack = $2 AND workspace = $3)";
  const r = await db.query<ClaimRow>(
    `SELECT stack, workspace, address, claim, false AS pending FROM ${q(schema)}.claims WHERE ${other}
     ` +
      `UNION ALL
     SELECT stack, workspace, address, claim, true AS pending FROM ${q(schema)}.reservations ` +
      `r WHERE ${other} AND ${LIVE_RESERVATION}
     ORDER BY pending, stack, workspace, address`,
    [objects, stack, workspace],
  );
  return claimConflicts(
    mine,
    r.rows.map((row) => byProjectId(owned(row), projectIds)),
  );
}

/** `objects` and, for each whose project has a number in `projectIds`, its name with that number. */
function withNumberForms(objects: string[], projectIds: ProjectIds | undefined): string[] {
  if (!projectIds?.size) return objects;
  const out = [...objects];
  for (const [number, id] of projectIds) {
    const prefix = `projects/${id}/`;
    for (const o of objects) if (o.startsWith(prefix)) out.push(`projects/${number}/${o.slice(prefix.length)}`);
  }
  return out;
}

/** `c` with its object named by its project's ID when it was recorded with the number. */
function byProjectId(c: OwnedClaim, projectIds: ProjectIds | undefined): OwnedClaim {
  const object = nameWithProjectId(c.claim.object, projectIds);
  return object === c.claim.object ? c : { ...c, claim: { ...c.claim, object } };
}

/** The project numbers in the objects other states claim or reserve (written so before project
 *  numbers were resolved): what conflictsWith's `projectIds` needs. */
export async function claimedProjectNumbers(db: Db, schema: string): Promise<string[]> {
  const r = await db.query<{ p: string }>(
    `SELECT split_part(object, '/', 2) AS p FROM ${q(schema)}.claims WHERE object ~ '^projects/[0-9]+/'
     UNION SELECT split_part(object, '/', 2) AS p FROM ${q(schema)}.reservations WHERE object ~ '^projects/[0-9]+/'`,
  );
  return r.rows.map((row) => row.p).sort();
}

/**
 * Records `mine` as what (stack, workspace) is about to claim, unless another stack or workspace
 * claims or reserves a grant that conflicts with one: then nothing is recorded and the conflicts
 * are returned. One transaction under the claims lock; the reservation lasts while `session`
 * holds the lock, and adds to what it reserved before (a taken lock starts with none).
 */
export async function reserveClaims(
  client: pg.ClientBase,
  schema: string,
  stack: string,
  workspace: string,
  session: LockSession,
  mine: readonly ResourceClaim[],
  projectIds?: ProjectIds,
): Promise<ClaimConflict[]> {
  return inTransaction(client, async () => {
    await lockClaims(client, schema);
    const conflicts = await conflictsWith(client, schema, stack, workspace, mine, projectIds);
    if (conflicts.length === 0) {
      await insertRows(client, `${q(schema)}.reservations`, stack, workspace, claimRows(mine), {
        columns: ", backend_pid, lock_k1, lock_k2",
        values: [session.pid, ...session.key],
      });
    }
    return conflicts;
  });
}

/** Removes the reservations of (stack, workspace) (its lock was just taken, or is being released). */
export async function dropReservations(
  client: pg.ClientBase,
  schema: string,
  stack: string,
  workspace: string,
): Promise<void> {
  await client.query(`DELETE FROM ${q(schema)}.reservations WHERE stack = $1 AND workspace = $2`, [stack, workspace]);
}

interface KeyRow {
  object: string;
  scope: string;
  role: string;
  condition_key: string;
  member_key: string;
}

const columnsKey = (c: { object: string; scope: string; role: string; conditionKey: string; memberKey: string }) =>
  JSON.stringify([c.object, c.scope, c.role, c.conditionKey, c.memberKey]);

/**
 * The conflicts of the claims `state` adds to those (stack, workspace) holds now, in the caller's
 * transaction (under the claims lock): a write never records a grant another stack manages. What
 * it already held is not compared again (a resource renamed, or moved, keeps its claim).
 */
export async function newClaimConflicts(
  client: pg.ClientBase,
  schema: string,
  stack: string,
  workspace: string,
  state: State,
): Promise<ClaimConflict[]> {
  const held = await client.query<KeyRow>(
    `SELECT object, scope, role, condition_key, member_key FROM ` +
      `${q(schema)}.claims WHERE stack = $1 AND workspace = $2`,
    [stack, workspace],
  );
  const have = new Set(
    held.rows.map((r) =>
      columnsKey({
        object: r.object,
        scope: r.scope,
        role: r.role,
        conditionKey: r.condition_key,
        memberKey: r.member_key,
      }),
    ),
  );
  const added = stateClaims(state).filter((rc) => !have.has(columnsKey(claimColumns(rc.claim))));
  return conflictsWith(client, schema, stack, workspace, added);
}

/** Every recorded claim. */
export async function everyClaim(db: pg.Pool, schema: string): Promise<OwnedClaim[]> {
  // And what applies under way have reserved and not yet recorded (pending: "is applying now").
  const r = await db.query<ClaimRow>(
    `SELECT stack, workspace, address, claim, false AS pending, object, role, member_key FROM ${q(schema)}` +
      `.claims
     UNION ALL
     SELECT stack, workspace, address, claim, true AS pending, object, role, ` +
      `member_key FROM ${q(schema)}.reservations r WHERE ${LIVE_RESERVATION}
       AND NOT EXISTS (SELECT 1 ` +
      `FROM ${q(schema)}.claims c WHERE (c.stack, c.workspace, c.address, c.object, c.scope, c.role, ` +
      `c.condition_key, c.member_key) = (r.stack, r.workspace, r.address, r.object, r.scope, r.role, ` +
      `r.condition_key, r.member_key))
     ORDER BY stack, workspace, address, object, role, member_key, ` +
      `pending`,
  );
  return r.rows.map(owned);
}
