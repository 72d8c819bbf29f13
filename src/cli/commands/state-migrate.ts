// `converge state migrate --to postgres|local`: moves every workspace's state of a stack from the
// backend it uses now to the other one. Refused, before anything is written, when the target
// already holds a state of any of them. Each workspace is copied under both locks (target
// written first, then the source's state removed: the local file is kept as {file}.backup, a
// PostgreSQL state's versions stay in its history). The local backend keeps no history, so there
// is none to move in either direction: PostgreSQL's history of a stack stays where it is.
import type { Command } from "commander";
import { loadStackFile } from "../../config/load.js";
import { type Diagnostic, error, UserError } from "../../diagnostics/diagnostic.js";
import { withStateLock } from "../../engine/session.js";
import { claimConflictError, claimConflicts, type OwnedClaim, stateClaims } from "../../state/claims.js";
import { DEFAULT_WORKSPACE } from "../../state/workspace.js";
import { BACKEND_TYPES, type BackendType, backendTypeOf, openStateStore, type StateLocation } from "../../state/factory.js";
import { action, durationMs, EXIT, stateChoice, type StateCommandOptions, writeOut } from "../common.js";
import { pushAll } from "../../arrays.js";

interface MigrateOptions extends StateCommandOptions {
  to: string;
  lockTimeout?: string;
}

/** The stack's state location on `type` (--state only names a local file). */
function locationOn(base: StateLocation, type: BackendType): StateLocation {
  const { state, ...rest } = base;
  return { ...rest, backendType: type, ...(type === "local" && state !== undefined ? { state } : {}) };
}

/** Refuses when the target already holds a state of one of `workspaces`. */
async function checkTargetEmpty(target: StateLocation, workspaces: string[]): Promise<void> {
  const catalog = openStateStore(target).workspaces;
  const taken: string[] = [];
  for (const ws of workspaces) {
    if (!(await catalog.exists(ws))) continue;
    const s = await openStateStore({ ...target, workspace: ws }).store.read();
    if (s) taken.push(`workspace "${ws}" (serial ${s.serial}, ${s.resources.length} resources)`);
  }
  if (taken.length) {
    throw new UserError(
      error(`the ${target.backendType} backend already has a state of stack "${target.stackName}": ${taken.join(", ")}; nothing was migrated`, {
        code: "state/migrate",
        detail: "Migrating never overwrites a state. Remove it there first (converge workspace delete, or converge state pull to keep a copy), or keep using that backend.",
      }),
    );
  }
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
  if (!store.claimConflicts) return;
  const moved: OwnedClaim[] = [];
  const refusals: Diagnostic[] = [];
  for (const ws of workspaces) {
    const state = await openStateStore({ ...source, workspace: ws }).store.read();
    if (!state) continue;
    const mine = stateClaims(state);
    const found = [...(await store.claimConflicts(mine)), ...claimConflicts(mine, moved)];
    if (found.length) pushAll(refusals, claimConflictError(found, openStateStore({ ...target, workspace: ws }).store.describe()).diagnostics);
    pushAll(moved, mine.map((m) => ({ ...m, stack: target.stackName, workspace: ws })));
  }
  if (refusals.length) throw new UserError(refusals);
}

/** Copies one workspace's state under both locks, then removes it from the source. */
async function migrateWorkspace(source: StateLocation, target: StateLocation, ws: string, timeoutMs: number | undefined): Promise<string> {
  const from = openStateStore({ ...source, workspace: ws });
  const to = openStateStore({ ...target, workspace: ws });
  const note = (await to.workspaces.exists(ws)) ? undefined : await to.workspaces.create(ws);
  const noted = (line: string) => (note ? `${line}\n  ${note}` : line);
  return withStateLock(from.store, "state migrate", timeoutMs, () =>
    withStateLock(to.store, "state migrate", timeoutMs, async () => {
      const state = await from.store.read();
      if (!state) return noted(`workspace "${ws}": no state yet (the workspace was created)`);
      if (await to.store.read()) throw new UserError(error(`a state of workspace "${ws}" appeared in ${to.store.describe()} while migrating; nothing more was migrated`, { code: "state/migrate" }));
      const written = await to.store.write(state, undefined, { operation: "state migrate" });
      await from.workspaces.drop(ws);
      return noted(`workspace "${ws}": ${state.resources.length} resources, serial ${written.serial} in ${to.store.describe()}`);
    }),
  );
}

async function migrate(o: MigrateOptions): Promise<number> {
  const to = o.to as BackendType;
  if (!BACKEND_TYPES.includes(to)) throw new UserError(error(`--to takes ${BACKEND_TYPES.join(" or ")}, got "${o.to}"`));
  const file = o.file ?? "stack.yaml";
  // Only the stack's name and backend matter: inputs without a value are not an error.
  const { stack, diagnostics } = loadStackFile(file, { inputsOptional: true });
  if (!stack) throw new UserError(diagnostics.length ? diagnostics : { severity: "error", summary: `cannot load ${file}` });
  const base: StateLocation = { stackFile: stack.file, stackName: stack.name, ...stateChoice(stack.backend, o) };
  const fromType = backendTypeOf(base);
  if (fromType === to) throw new UserError(error(`the state of stack "${stack.name}" is already on the ${to} backend`, { code: "state/migrate", detail: "--backend names the backend to migrate from when the stack file's backend: is not it." }));
  const source = locationOn(base, fromType);
  const target = locationOn(base, to);
  const workspaces = await openStateStore(source).workspaces.list();
  await checkTargetEmpty(target, workspaces);
  await checkClaimsOnTarget(source, target, workspaces);
  const done: string[] = [];
  for (const ws of workspaces) done.push(await migrateWorkspace(source, target, ws, durationMs(o.lockTimeout)));
  const history =
    fromType === "postgres"
      ? "The history stays on PostgreSQL (the local backend keeps none): converge state history --backend postgres still lists it."
      : "The local backend kept no history: the history on PostgreSQL starts with this migration.";
  const next = to === "postgres" ? `backend: {type: postgres} in ${file} (or --backend postgres)` : `no backend: in ${file} (or --backend local)`;
  await writeOut(`Migrated the state of stack "${stack.name}" from ${fromType} to ${to}:\n${done.map((d) => `  ${d}\n`).join("")}${history}\nThe ${fromType} state was removed${fromType === "local" ? " (kept as its .backup file)" : ""}. Use ${next} from now on.\n`);
  return EXIT.ok;
}

export function registerStateMigrate(state: Command, common: (cmd: Command) => Command): void {
  common(state.command("migrate").description("Move the stack's state (every workspace) to another backend; refused when the target has state"))
    .requiredOption("--to <type>", "the backend to move to: postgres or local")
    .action(action((o: MigrateOptions) => migrate(o)));
}
