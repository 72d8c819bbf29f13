// The claims table on PostgreSQL: each (stack, workspace) state's claims, replaced inside the
// transaction that writes the state, and the query that finds other owners of a plan's objects.
import type pg from "pg";
import { pgModule } from "./pg.js";
import type { Claim } from "../../drivers/types.js";
import type { State } from "../../generated/schemas.js";
import { claimColumns, claimConflicts, type ClaimConflict, type OwnedClaim, type ResourceClaim, stateClaims } from "../claims.js";

/** Replaces the claims of (stack, workspace) with those of `state` (none: undefined), in the caller's transaction. */
export async function replaceClaims(client: pg.ClientBase, schema: string, stack: string, workspace: string, state: State | undefined): Promise<void> {
  const q = pgModule().escapeIdentifier(schema);
  await client.query(`DELETE FROM ${q}.claims WHERE stack = $1 AND workspace = $2`, [stack, workspace]);
  const seen = new Set<string>();
  const rows: unknown[][] = [];
  for (const { address, claim } of state ? stateClaims(state) : []) {
    const c = claimColumns(claim);
    const key = JSON.stringify([address, c]);
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push([address, c.object, c.scope, c.role, c.conditionKey, c.memberKey, JSON.stringify(claim)]);
  }
  // One statement for all rows: arrays unnested server-side.
  if (rows.length === 0) return;
  const col = (i: number) => rows.map((r) => r[i]);
  await client.query(
    `INSERT INTO ${q}.claims (stack, workspace, address, object, scope, role, condition_key, member_key, claim)
     SELECT $1, $2, a, o, s, r, ck, mk, c::json FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS t(a, o, s, r, ck, mk, c)`,
    [stack, workspace, col(0), col(1), col(2), col(3), col(4), col(5), col(6)],
  );
}

interface ClaimRow {
  stack: string;
  workspace: string;
  address: string;
  claim: Claim;
}

const owned = (r: ClaimRow): OwnedClaim => ({ stack: r.stack, workspace: r.workspace, address: r.address, claim: r.claim });

/** The recorded claims of other (stack, workspace) states that conflict with `mine`. */
export async function conflictsWith(db: pg.Pool, schema: string, stack: string, workspace: string, mine: readonly ResourceClaim[]): Promise<ClaimConflict[]> {
  if (mine.length === 0) return [];
  const objects = [...new Set(mine.map((m) => m.claim.object))];
  const r = await db.query<ClaimRow>(
    `SELECT stack, workspace, address, claim FROM ${pgModule().escapeIdentifier(schema)}.claims
     WHERE object = ANY($1::text[]) AND NOT (stack = $2 AND workspace = $3) ORDER BY stack, workspace, address`,
    [objects, stack, workspace],
  );
  return claimConflicts(mine, r.rows.map(owned));
}

/** Every recorded claim. */
export async function everyClaim(db: pg.Pool, schema: string): Promise<OwnedClaim[]> {
  const r = await db.query<ClaimRow>(`SELECT stack, workspace, address, claim FROM ${pgModule().escapeIdentifier(schema)}.claims ORDER BY stack, workspace, address, object, role, member_key`);
  return r.rows.map(owned);
}
