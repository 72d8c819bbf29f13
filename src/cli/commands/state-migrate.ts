// `converge state migrate --to postgres|local`: moves every workspace's state of a stack from the
// backend it uses now to the other one, each under both locks (./state-migrate-steps.ts: the
// source fenced, its pending write intents and a local .backup moved too, the copy committed, the
// source retired: the local file is kept as {file}.backup, a PostgreSQL state's versions stay in
// its history). A migrate stopped at any moment finishes when run again. Refused, before anything
// is written, when the target holds another state (another lineage) of one of the workspaces, or
// when their claims would conflict there. PostgreSQL's history of a stack stays where it is.
import type { Command } from "commander";
import { loadStackFile } from "../../config/load.js";
import { type Diagnostic, error, UserError } from "../../diagnostics/diagnostic.js";
import { withStateLock } from "../../engine/session.js";
import { claimConflictError, claimConflicts, stateClaims } from "../../claims/claims.js";
import type { ClaimConflict, OwnedClaim } from "../../claims/claims.js";
import { DEFAULT_WORKSPACE } from "../../state/workspace.js";
import {
  BACKEND_TYPES,
  type BackendType,
  backendTypeOf,
  openStateStore,
  type StateLocation,
} from "../../state/factory.js";
import { action, stateChoice, type StateCommandOptions, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";
import { durationMs } from "../deadline.js";
import { pushAll } from "../../base/arrays.js";
import { MIGRATE_OPERATION } from "../../state/move-fence.js";
import type { StateStore } from "../../state/store.js";
import { type Moved, moveWorkspace, otherLineage, stopPoint } from "./state-migrate-steps.js";

interface MigrateOptions extends StateCommandOptions {
  to: string;
  lockTimeout?: string;
}

/** The stack's state location on `type` (--state only names a local file). */
function locationOn(base: StateLocation, type: BackendType): StateLocation {
  const { state, ...rest } = base;
  return { ...rest, backendType: type, ...(type === "local" && state !== undefined ? { state } : {}) };
}

/**
 * Refuses, before anything is written, when the target holds another state (another lineage) of
 * one of `workspaces`, or a state being moved the other way by an unfinished migrate. A target of
 * the same lineage holds this very state (a migrate stopped after its commit): the run finishes it.
 */
async function checkTargets(source: StateLocation, target: StateLocation, workspaces: string[]): Promise<void> {
  const catalog = openStateStore(target).workspaces;
  const refusals: Diagnostic[] = [];
  for (const ws of workspaces) {
    if (!(await catalog.exists(ws))) continue;
    const to = openStateStore({ ...target, workspace: ws });
    const moved = await openStateStore({ ...source, workspace: ws }).store.read();
    const [there, fence] = [await to.store.read(), await to.mover.movingTo()];
    const finish = `converge state migrate --to ${fence?.to} --backend ${target.backendType}`;
    const moving = `${to.store.describe()} is being moved to the ${fence?.to} backend by a migrate that did not finish`;
    const summary = `${moving}; nothing was migrated: finish that one first (${finish})`;
    if (fence) refusals.push(error(summary, { code: "state/migrate" }));
    else if (moved && there && there.lineage !== moved.lineage) {
      pushAll(refusals, otherLineage(to, ws, there, moved).diagnostics);
    }
  }
  if (refusals.length) throw new UserError(refusals);
}

/**
 * Refuses, before anything moves, when the states would claim on the target what another stack
 * or workspace claims there, or what another of the workspaces moved claims (the local backend
 * compares nothing across stacks or workspaces): the write of such a workspace would be refused
 * after the ones before it had moved.
 */
async function checkClaimsOnTarget(source: StateLocation, target: StateLocation, workspaces: string[]): Promise<void> {
  // The default workspace's store (it always exists) asks for every stack's claims.
  const store = openStateStore({ ...target, workspace: DEFAULT_WORKSPACE }).store;
  if (!store.claims) return;
  const moved: OwnedClaim[] = [];
  const refusals: Diagnostic[] = [];
  for (const ws of workspaces) {
    const state = await openStateStore({ ...source, workspace: ws }).store.read();
    if (!state) continue;
    const mine = stateClaims(state);
    // A copy of this workspace already on the target (a migrate run again) is not another owner.
    const mineThere = (c: ClaimConflict) => c.owner.stack === target.stackName && c.owner.workspace === ws;
    const theirs = (await store.claims.conflicts(mine)).filter((c) => !mineThere(c));
    const found = [...theirs, ...claimConflicts(mine, moved)];
    if (found.length)
      pushAll(
        refusals,
        claimConflictError(found, openStateStore({ ...target, workspace: ws }).store.describe()).diagnostics,
      );
    pushAll(
      moved,
      mine.map((m) => ({ ...m, stack: target.stackName, workspace: ws })),
    );
  }
  if (refusals.length) throw new UserError(refusals);
}

/** Moves one workspace's state under both locks (./state-migrate-steps.ts); the line the summary prints. */
async function migrateWorkspace(
  source: StateLocation,
  target: StateLocation,
  ws: string,
  timeoutMs: number | undefined,
): Promise<string> {
  const from = openStateStore({ ...source, workspace: ws });
  const to = openStateStore({ ...target, workspace: ws });
  const note = (await to.workspaces.exists(ws)) ? undefined : await to.workspaces.create(ws);
  const noted = (line: string) => (note ? `${line}\n  ${note}` : line);
  const lock = (store: StateStore, fn: () => Promise<Moved>) => withStateLock(store, MIGRATE_OPERATION, timeoutMs, fn);
  const m = await lock(from.store, () => lock(to.store, () => moveWorkspace(from, to, ws, to.type)));
  await stopPoint("moved", ws);
  if (!m.state || !m.written) return noted(`workspace "${ws}": no state here (none yet, or moved by an earlier run)`);
  const extra: string[] = [];
  if (m.intents) extra.push(`${m.intents} pending write intent${m.intents === 1 ? "" : "s"} moved with it`);
  if (m.history) extra.push("its previous version (the .backup) added to the history");
  const where = `serial ${m.written.serial} in ${to.store.describe()}`;
  const line = `workspace "${ws}": ${m.written.resources.length} resources, ${where}`;
  return noted(extra.length ? `${line} (${extra.join("; ")})` : line);
}

async function migrate(o: MigrateOptions): Promise<number> {
  const to = o.to as BackendType;
  if (!BACKEND_TYPES.includes(to))
    throw new UserError(error(`--to takes ${BACKEND_TYPES.join(" or ")}, got "${o.to}"`));
  const file = o.file ?? "stack.yaml";
  // Only the stack's name and backend matter: inputs without a value are not an error.
  const { stack, diagnostics } = loadStackFile(file, { inputsOptional: true });
  if (!stack)
    throw new UserError(diagnostics.length ? diagnostics : { severity: "error", summary: `cannot load ${file}` });
  const base: StateLocation = { stackFile: stack.file, stackName: stack.name, ...stateChoice(stack.backend, o) };
  const fromType = backendTypeOf(base);
  if (fromType === to)
    throw new UserError(
      error(`the state of stack "${stack.name}" is already on the ${to} backend`, {
        code: "state/migrate",
        detail: "--backend names the backend to migrate from when the stack file's backend: is not it.",
      }),
    );
  const source = locationOn(base, fromType);
  const target = locationOn(base, to);
  const workspaces = await openStateStore(source).workspaces.list();
  await checkTargets(source, target, workspaces);
  await checkClaimsOnTarget(source, target, workspaces);
  await stopPoint("checked");
  const done: string[] = [];
  for (const ws of workspaces) done.push(await migrateWorkspace(source, target, ws, durationMs(o.lockTimeout)));
  const advice = migrateAdvice(
    fromType,
    to,
    file,
    stack.backend?.type === "postgres" ? stack.backend.schema : undefined,
  );
  const steps = done.map((d) => `  ${d}\n`).join("");
  await writeOut(`Migrated the state of stack "${stack.name}" from ${fromType} to ${to}:\n${steps}${advice}\n`);
  return EXIT.ok;
}

/** What to do next, as it works: a schema other than the default is named in the backend block
 *  (`--backend postgres` alone reads the default schema). */
function migrateAdvice(fromType: BackendType, to: BackendType, file: string, schema: string | undefined): string {
  const block = schema === undefined ? "backend: {type: postgres}" : `backend: {type: postgres, schema: ${schema}}`;
  const history =
    fromType !== "postgres"
      ? "The local backend kept no history but the previous version (.backup): " +
        "the history on PostgreSQL starts there."
      : schema === undefined
        ? "The history stays on PostgreSQL (the local backend keeps none): " +
          "converge state history --backend postgres still lists it."
        : `The history stays on PostgreSQL, in schema ${schema} (the local backend keeps none): ` +
          `with \`${block}\` in ${file}, converge state history lists it.`;
  const next =
    to === "postgres"
      ? `\`${block}\` in ${file}${schema === undefined ? " (or --backend postgres)" : ""}`
      : `no backend: in ${file} (or --backend local)`;
  const kept = fromType === "local" ? " (kept as its .backup file)" : "";
  return `${history}\nThe ${fromType} state was removed${kept}. Use ${next} from now on.`;
}

export function registerStateMigrate(state: Command, common: (cmd: Command) => Command): void {
  const what = "Move the stack's state (every workspace) to another backend (run again, it finishes a stopped one)";
  common(state.command("migrate").description(`${what}; refused when the target has another state`))
    .requiredOption("--to <type>", "the backend to move to: postgres or local")
    .action(action((o: MigrateOptions) => migrate(o)));
}
