// `state migrate` fences a workspace's state on the backend it leaves before it commits the copy
// on the other one: from then on the source refuses its lock to every other command, so the two
// copies never both take writes. The fence records the version being moved and where to; a
// migrate run again finds it and finishes (the source is retired with its fence). Local: a file
// {state file}.moving beside the state; PostgreSQL: a row of {schema}.moves.
import { UserError, error } from "../diagnostics/diagnostic.js";

/** The lock operation of `state migrate`: the only one a fenced state still takes. */
export const MIGRATE_OPERATION = "state migrate";

export interface MoveFence {
  lineage: string;
  serial: number;
  /** The backend it is moved to: "postgres" or "local". */
  to: string;
  /** When the move started (RFC 3339). */
  since: string;
}

/** What a backend's store offers `state migrate` about its fence. */
export interface FencedStore {
  /** The fence of an unfinished move of this state, if any. */
  movingTo(): Promise<MoveFence | undefined>;
  /** Fences the state (the caller holds its lock); a fence already there is kept. */
  fenceForMove(fence: MoveFence): Promise<void>;
}

/** A MoveFence read back, or undefined when `v` is not one. */
export function fenceFrom(v: unknown): MoveFence | undefined {
  if (!v || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.lineage !== "string" || typeof o.serial !== "number" || typeof o.to !== "string") return undefined;
  return { lineage: o.lineage, serial: o.serial, to: o.to, since: typeof o.since === "string" ? o.since : "" };
}

/** The error of a command that wants the lock of a state a migrate is moving away. */
export function movingError(where: string, fence: MoveFence): UserError {
  return new UserError(
    error(
      `the state ${where} is being moved to the ${fence.to} backend by a converge state migrate that did not ` +
        `finish (started ${fence.since || "earlier"}): it takes no more writes here`,
      {
        code: "state/moving",
        file: where,
        detail:
          `Run \`converge state migrate --to ${fence.to}\` again (with the same --backend, if one was given): ` +
          `it finishes the move, which keeps every version and pending write. Then use the ${fence.to} backend.`,
      },
    ),
  );
}

/** A lock just taken on a state a migrate is moving away is released and refused (a migrate's own
 *  lock is not): no other command works on a state half moved. */
export async function refuseWhileMoving(
  operation: string,
  movingTo: () => Promise<MoveFence | undefined>,
  release: () => Promise<void>,
  where: string,
): Promise<void> {
  if (operation === MIGRATE_OPERATION) return;
  const fence = await movingTo().catch(async (e: unknown) => {
    await release();
    throw e;
  });
  if (fence) {
    await release();
    throw movingError(where, fence);
  }
}
