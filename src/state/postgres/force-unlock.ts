// `state force-unlock` on PostgreSQL: which holder rows it may remove. A live holder's lock
// belongs to its database session, which converge never ends: it is refused with how it goes away.
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { describeHolder, type HolderRow } from "./lock.js";

/** Why the holder row `row` (undefined: none) of the state at `where` may not be removed as lock
 *  `id`; undefined when it may (a row of a session that is gone, with that ID). */
export function forceUnlockRefusal(row: HolderRow | undefined, id: string, where: string): UserError | undefined {
  if (!row || (!row.live && row.id !== id)) {
    return new UserError(
      error(`no lock: the state ${where} is not locked`, {
        file: where,
        detail: "On PostgreSQL a killed holder's lock is released with its database session: nothing needs unlocking.",
      }),
    );
  }
  if (row.id !== id) {
    return new UserError(
      error(
        `lock ID ${id} does not match the current lock: the state is locked by ` +
          `${describeHolder(row)} with lock ID ${row.id}`,
        { file: where },
      ),
    );
  }
  if (!row.live) return undefined;
  return new UserError(
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
