// The write-ahead intents of a PostgreSQL state (../../apply/intents.ts): rows of
// {schema}.intents, by (stack, workspace, id), in the order they were recorded (seq).
import type pg from "pg";
import { pgModule } from "./pg.js";
import type { WriteIntent } from "../../generated/schemas.js";

/** Where the intents are: the schema's table and the (stack, workspace) they belong to. */
export interface IntentsScope {
  schema: string;
  stack: string;
  workspace: string;
}

/** The most intents one INSERT takes (2 parameters each; PostgreSQL takes up to 65,535 a statement). */
const INTENTS_PER_INSERT = 1_000;

/** Records `intents` (each ID once, the last body) on `client`; an intent recorded again under its
 *  ID keeps its place, with the new body. The caller runs this in a transaction. */
export async function insertIntents(
  client: pg.ClientBase,
  scope: IntentsScope,
  intents: readonly WriteIntent[],
): Promise<void> {
  const byId = new Map<string, WriteIntent>();
  for (const i of intents) byId.set(i.id, i);
  const rows = [...byId.values()];
  const { stack, workspace } = scope;
  for (let at = 0; at < rows.length; at += INTENTS_PER_INSERT) {
    const chunk = rows.slice(at, at + INTENTS_PER_INSERT);
    // One VALUES list: its rows take their seq in the order they are listed.
    const values = chunk.map((_, k) => `($1, $2, $${2 * k + 3}, $${2 * k + 4}::json)`).join(", ");
    const params = [stack, workspace, ...chunk.flatMap((i) => [i.id, JSON.stringify(i)])];
    await client.query(
      `INSERT INTO ${pgModule().escapeIdentifier(scope.schema)}.intents (stack, workspace, id, body) ` +
        `VALUES ${values} ON CONFLICT (stack, workspace, id) DO UPDATE SET body = EXCLUDED.body`,
      params,
    );
  }
}

/** The intents not cleared yet, in the order they were recorded. */
export async function readIntents(db: pg.Pool, scope: IntentsScope): Promise<WriteIntent[]> {
  const q = pgModule().escapeIdentifier(scope.schema);
  const r = await db.query<{ text: string }>(
    `SELECT body::text AS text FROM ${q}.intents WHERE stack = $1 AND workspace = $2 ORDER BY seq`,
    [scope.stack, scope.workspace],
  );
  return r.rows.map((row) => JSON.parse(row.text) as WriteIntent);
}

/** Removes the intents of `ids`. */
export async function deleteIntents(db: pg.Pool, scope: IntentsScope, ids: readonly string[]): Promise<void> {
  const q = pgModule().escapeIdentifier(scope.schema);
  await db.query(`DELETE FROM ${q}.intents WHERE stack = $1 AND workspace = $2 AND id = ANY($3::text[])`, [
    scope.stack,
    scope.workspace,
    [...ids],
  ]);
}
