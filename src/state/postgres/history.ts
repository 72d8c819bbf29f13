// The history of a (stack, workspace) state on PostgreSQL: every version written, with who wrote
// it (CONVERGE_ACTOR, else the OS user), from which host, with which command, and when known the
// digest of the plan applied and its access summary. A write adds its version, so the previous
// one stays readable here: `state history` and `show --serial` (later) read this table.
import { hostname as osHostname } from "node:os";
import type pg from "pg";
import { TOOL_VERSION } from "../../version.js";
import { currentUser } from "../lock.js";
import type { WriteMeta } from "../store.js";

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
}

/** Adds a version to the history, inside the caller's transaction. */
export async function recordVersion(client: pg.ClientBase, schema: string, e: HistoryEntry): Promise<void> {
  await client.query(
    `INSERT INTO ${client.escapeIdentifier(schema)}.history
       (stack, workspace, lineage, serial, state, actor, host, operation, plan_digest, granted, revoked, converge_version)
     VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10, $11, $12)`,
    [
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
    ],
  );
}
