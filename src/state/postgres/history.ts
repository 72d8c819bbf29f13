// The history of a (stack, workspace) state on PostgreSQL: every version written, with who wrote
// it (CONVERGE_ACTOR, else the OS user), from which host, with which command, and when known the
// digest of the plan applied and its access summary. A write adds its version, so the previous
// one stays readable here: `state history` and `show --serial` read this table.
import { hostname as osHostname } from "node:os";
import type pg from "pg";
import { pgModule } from "./pg.js";
import { TOOL_VERSION } from "../../base/version.js";
import { currentUser } from "../local/lock.js";
import type { DriftEvent, DriftLog, GuardrailApproval, HistoryRecord, WriteMeta } from "../store.js";
import type { State } from "../../generated/schemas.js";
import { serializeState } from "../format.js";

const pgEscape = (schema: string): string => pgModule().escapeIdentifier(schema);

/** Who is writing: CONVERGE_ACTOR when set (a CI job, a pipeline), else the OS user. */
export function actorOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.CONVERGE_ACTOR?.trim() || currentUser();
}

export interface HistoryEntry {
  stack: string;
  workspace: string;
  lineage: string;
  serial: number;
  /** The state's text as stored. */
  text: string;
  operation: string;
  meta: WriteMeta;
  /** The run that wrote it (the id of the lock held), when one did. */
  run?: string;
}

/**
 * Adds a version to the history, inside the caller's transaction. A version written by a run (the
 * lock a command holds) that has a row already replaces that row: an apply saves the state as each
 * policy lands, and is still one row, holding its last version.
 */
export async function recordVersion(client: pg.ClientBase, schema: string, e: HistoryEntry): Promise<void> {
  const values = [
    e.stack,
    e.workspace,
    e.lineage,
    e.serial,
    e.text,
    actorOf(),
    osHostname(),
    e.operation,
    e.meta.planDigest ?? null,
    e.meta.access?.granted ?? null,
    e.meta.access?.revoked ?? null,
    TOOL_VERSION,
    e.run ?? null,
    e.meta.approvals?.length ? JSON.stringify(e.meta.approvals) : null,
  ];
  const q = client.escapeIdentifier(schema);
  if (e.run !== undefined) {
    const updated = await client.query(
      `UPDATE ${q}.history SET lineage = $3, serial = $4, state = $5::json, actor = $6, host = $7, operation = $8,
         plan_digest = $9, granted = $10, revoked = $11, converge_version = $12, written = now(), approvals = $14::json
       WHERE stack = $1 AND workspace = $2 AND run = $13`,
      values,
    );
    if (updated.rowCount) return;
  }
  await client.query(
    `INSERT INTO ${q}.history
       (stack, workspace, lineage, serial, state, actor, host, operation, plan_digest, granted, revoked,
        converge_version, run, approvals)
     VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10, $11, $12, $13, $14::json)`,
    values,
  );
}

interface HistoryRow {
  serial: string;
  lineage: string;
  written: Date;
  actor: string;
  host: string;
  operation: string;
  plan_digest: string | null;
  granted: number | null;
  revoked: number | null;
  converge_version: string;
  approvals: GuardrailApproval[] | null;
}

/** The versions of (stack, workspace), oldest first. */
export async function readHistory(
  db: pg.Pool,
  schema: string,
  stack: string,
  workspace: string,
): Promise<HistoryRecord[]> {
  const r = await db.query<HistoryRow>(
    `SELECT serial, lineage, written, actor, host, operation, plan_digest, granted, revoked, converge_version, approvals
       FROM ${pgEscape(schema)}.history WHERE stack = $1 AND workspace = $2 ORDER BY id`,
    [stack, workspace],
  );
  return r.rows.map((row) => ({
    serial: Number(row.serial),
    lineage: row.lineage,
    written: new Date(row.written).toISOString(),
    actor: row.actor,
    host: row.host,
    operation: row.operation,
    ...(row.plan_digest !== null ? { planDigest: row.plan_digest } : {}),
    ...(row.granted !== null || row.revoked !== null
      ? { access: { granted: row.granted ?? 0, revoked: row.revoked ?? 0 } }
      : {}),
    ...(row.approvals !== null ? { approvals: row.approvals } : {}),
    convergeVersion: row.converge_version,
  }));
}

/** The text of the version with `serial`: of `lineage` when it has one, else the latest written with that serial. */
export async function readVersion(
  db: pg.Pool,
  schema: string,
  stack: string,
  workspace: string,
  serial: number,
  lineage: string | undefined,
): Promise<string | undefined> {
  const r = await db.query<{ text: string }>(
    `SELECT state::text AS text FROM ${pgEscape(schema)}.history WHERE stack = $1 AND workspace = $2 AND serial = $3
       ORDER BY (lineage = $4) DESC, id DESC LIMIT 1`,
    [stack, workspace, serial, lineage ?? ""],
  );
  return r.rows[0]?.text;
}

/** Adds `versions` (with `operation`) to the history of (stack, workspace), each once: one whose
 *  lineage and serial the history holds already is left out. Inside the caller's transaction. */
export async function importVersions(
  client: pg.ClientBase,
  schema: string,
  of: { stack: string; workspace: string },
  versions: readonly State[],
  operation: string,
): Promise<number> {
  let added = 0;
  const seen = `SELECT 1 FROM ${pgEscape(schema)}.history
    WHERE stack = $1 AND workspace = $2 AND lineage = $3 AND serial = $4`;
  for (const v of versions) {
    const r = await client.query(seen, [of.stack, of.workspace, v.lineage, v.serial]);
    if (r.rowCount) continue;
    const text = serializeState(v);
    await recordVersion(client, schema, { ...of, lineage: v.lineage, serial: v.serial, text, operation, meta: {} });
    added++;
  }
  return added;
}

type Query = <T>(action: string, fn: (db: pg.Pool) => Promise<T>) => Promise<T>;

export type { DriftLog };

/** The drift log of `scope`, through the store's `query` (its pool, its errors). */
export function driftLog(scope: { schema: string; stack: string; workspace: string }, query: Query): DriftLog {
  const table = () => `${pgEscape(scope.schema)}.drift_events`;
  return {
    record: (events, serial) =>
      query("record the drift", async (db) => {
        if (!events.length) return;
        const rows = events.map((e) => [e.event, e.finding.class, e.finding.object, JSON.stringify(e.finding)]);
        await db.query(
          `INSERT INTO ${table()} (stack, workspace, serial, actor, host, event, class, object, finding)
           SELECT $1, $2, $3, $4, $5, e->>0, e->>1, e->>2, (e->>3)::json FROM json_array_elements($6::json) AS e`,
          [scope.stack, scope.workspace, serial, actorOf(), osHostname(), JSON.stringify(rows)],
        );
      }),
    read: () =>
      query("read the drift history", async (db) => {
        type Row = { recorded: Date; actor: string; host: string; serial: string; event: string; finding: unknown };
        const r = await db.query<Row>(
          `SELECT recorded, actor, host, serial, event, finding FROM ${table()}
             WHERE stack = $1 AND workspace = $2 ORDER BY id`,
          [scope.stack, scope.workspace],
        );
        return r.rows.map((row) => ({
          recorded: new Date(row.recorded).toISOString(),
          actor: row.actor,
          host: row.host,
          serial: Number(row.serial),
          event: row.event === "cleared" ? ("cleared" as const) : ("found" as const),
          finding: row.finding as DriftEvent["finding"],
        }));
      }),
  };
}
