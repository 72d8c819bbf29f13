// The steps of `state migrate` for one workspace, each safe to repeat: a migrate stopped at any
// moment (a kill, a lost connection) is finished by running it again. Under both locks: the
// source is fenced (../../state/move-fence.ts: no other command takes its lock from then on),
// its pending write intents are recorded on the target, a local state's previous version (its
// .backup) goes into PostgreSQL's history, the copy is committed on the target, and the source
// is retired with its intents and its fence. A target that holds the same lineage holds this
// state already (a run stopped after its commit): it is not written again unless the source is
// newer (a copy made by a converge without fences, the source written to afterwards).
import { UserError, error } from "../../diagnostics/diagnostic.js";
import type { State } from "../../generated/schemas.js";
import { type OpenedState, type StateMover } from "../../state/factory.js";
import { serializeState } from "../../state/format.js";
import { localStateStore, LocalStateStore } from "../../state/local/store.js";
import { MIGRATE_OPERATION } from "../../state/move-fence.js";
import { type StateStore, versionOf } from "../../state/store.js";

type Opened = OpenedState & { mover: StateMover };

/**
 * A deterministic stop for tests (never set otherwise): CONVERGE_TEST_MIGRATE_STOP=STEP or
 * STEP:WORKSPACE makes the process send itself CONVERGE_TEST_MIGRATE_SIGNAL (default SIGKILL) there.
 */
export async function stopPoint(step: string, workspace?: string): Promise<void> {
  const at = process.env.CONVERGE_TEST_MIGRATE_STOP;
  if (!at || (at !== step && at !== `${step}:${workspace ?? ""}`)) return;
  process.kill(process.pid, (process.env.CONVERGE_TEST_MIGRATE_SIGNAL ?? "SIGKILL") as NodeJS.Signals);
  // The signal's handler ends the process; nothing more is done meanwhile.
  await new Promise(() => setInterval(() => undefined, 1_000));
}

/** The refusal of a target that holds another state (another lineage) of the workspace. */
export function otherLineage(to: Opened, ws: string, there: State, moved: State): UserError {
  const theirs = `lineage ${there.lineage}, serial ${there.serial}, ${there.resources.length} resources`;
  return new UserError(
    error(
      `the ${to.type} backend already has a state of stack "${moved.stack}": workspace "${ws}" (${theirs}), ` +
        `another state than the one migrated (lineage ${moved.lineage}); nothing was migrated`,
      {
        code: "state/migrate",
        file: to.store.describe(),
        detail:
          "Migrating never overwrites another state. Remove it there first (converge workspace delete, " +
          "or converge state pull to keep a copy), or keep using that backend.",
      },
    ),
  );
}

/** Records on the target the source's pending write intents it does not hold yet; returns how many are pending. */
async function moveIntents(from: StateStore, to: StateStore): Promise<number> {
  const pending = await from.pendingIntents();
  if (!pending.length) return 0;
  const have = new Set((await to.pendingIntents()).map((i) => i.id));
  await to.recordIntents(pending.filter((i) => !have.has(i.id)));
  return pending.length;
}

/** A local source's previous version ({file}.backup, same lineage, older) into the target's history. */
async function moveBackup(from: Opened, to: Opened, state: State): Promise<number> {
  if (!(from.store instanceof LocalStateStore) || !to.mover.importHistory) return 0;
  const backup = await localStateStore(`${from.store.path}.backup`, { stack: state.stack })
    .read()
    .catch(() => undefined); // an unreadable backup is left where it is
  if (!backup || backup.lineage !== state.lineage || backup.serial >= state.serial) return 0;
  return to.mover.importHistory([backup], `${MIGRATE_OPERATION} (the local .backup)`);
}

const sameContent = (a: State, b: State) => serializeState({ ...a, serial: 0 }) === serializeState({ ...b, serial: 0 });

/** Commits `state` on the target unless the target holds it already (or a later version of it). */
async function commitCopy(to: StateStore, state: State, there: State | undefined): Promise<State> {
  if (there && (there.serial > state.serial || sameContent(there, state))) return there;
  return to.write(state, versionOf(there), { operation: MIGRATE_OPERATION });
}

/** What moved of one workspace, for the summary. */
export interface Moved {
  state?: State;
  written?: State;
  intents: number;
  history: number;
}

/** Moves one workspace's state; the caller holds both locks. */
export async function moveWorkspace(from: Opened, to: Opened, ws: string, toType: string): Promise<Moved> {
  const state = await from.store.read();
  if (!state) {
    // A retire stopped after the state went: its fence (and intents) go now.
    if (await from.mover.movingTo()) await from.workspaces.drop(ws);
    return { intents: 0, history: 0 };
  }
  const there = await to.store.read();
  if (there && there.lineage !== state.lineage) throw otherLineage(to, ws, there, state);
  await from.mover.fenceForMove({
    lineage: state.lineage,
    serial: state.serial,
    to: toType,
    since: new Date().toISOString(),
  });
  await stopPoint("fenced", ws);
  const intents = await moveIntents(from.store, to.store);
  const history = await moveBackup(from, to, state);
  await stopPoint("copied", ws);
  const written = await commitCopy(to.store, state, there);
  await stopPoint("committed", ws);
  await from.workspaces.drop(ws);
  return { state, written, intents, history };
}
