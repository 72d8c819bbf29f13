// Where a stack's state lives, chosen in one place: every command that reads or writes a state
// gets its store here. The stack's `backend:` (or --backend) picks the local file (the default)
// or PostgreSQL, whose connection comes only from the environment.
import { basename, dirname, relative, resolve, sep } from "node:path";
import { UserError, error } from "../diagnostics/diagnostic.js";
import type { PlanBackend } from "../generated/schemas.js";
import { defaultStatePath } from "./format.js";
import { localStateStore } from "./local/store.js";
import { LocalWorkspaces, workspaceStatePath } from "./local/workspaces.js";
import { DEFAULT_PG_SCHEMA, postgresStateStore } from "./postgres/store.js";
import { PostgresWorkspaces } from "./postgres/workspaces.js";
import type { StateStore } from "./store.js";
import type { FencedStore } from "./move-fence.js";
import { checkStackName } from "./name-collisions.js";
import type { State } from "../generated/schemas.js";
import { chosenWorkspace, DEFAULT_WORKSPACE, type WorkspaceCatalog } from "./workspace.js";

import { BACKEND_TYPES, type BackendType } from "./backend-types.js";

export { BACKEND_TYPES, type BackendType };

export interface StateLocation {
  /** The stack file: the default state sits beside it. */
  stackFile: string;
  /** The stack the state must belong to. */
  stackName: string;
  /** An explicit state file (--state). */
  state?: string;
  /** The stack's `backend:`. */
  backend?: { type: BackendType; schema?: string };
  /** --backend: overrides the stack's type. */
  backendType?: BackendType;
  /** --workspace (else CONVERGE_WORKSPACE, else the one selected, else default). */
  workspace?: string;
}

/** --state, else state/{stack name}.json in the directory of the stack file. */
export function statePathOf(location: StateLocation): string {
  return location.state !== undefined
    ? resolve(location.state)
    : defaultStatePath(dirname(resolve(location.stackFile)), location.stackName);
}

/** What `state migrate` asks of a store beyond the StateStore contract (./move-fence.ts); a
 *  backend with history takes the versions of another's. */
export type StateMover = FencedStore & {
  importHistory?(versions: readonly State[], operation: string): Promise<number>;
};

/** The backend type a location uses: --backend, else the stack's, else local. */
export function backendTypeOf(location: StateLocation): BackendType {
  return location.backendType ?? location.backend?.type ?? "local";
}

/** An opened stack state: its store, the directory of its files, its workspace and the stack's workspaces. */
export interface OpenedState {
  store: StateStore;
  /** The directory of the state files (the embedded emulator's world sits there too, whatever the backend). */
  dir: string;
  workspace: string;
  workspaces: WorkspaceCatalog;
  /** The stack the state belongs to (undefined: a --state file opened for no stack). */
  stack?: string;
  type: BackendType;
}

/**
 * Which state of a stack a store holds, as a saved plan records it (no credential, no absolute
 * path): the backend type and workspace, and the state file relative to the stack file's
 * directory (local) or the schema (PostgreSQL; its connection comes from the environment).
 */
export type StateIdentity = PlanBackend;

/** "local state file state/app.dev.json", "PostgreSQL schema converge": for messages. */
export function describeIdentity(identity: StateIdentity): string {
  return identity.type === "local"
    ? `local state file ${identity.path ?? "(unknown)"}`
    : `PostgreSQL schema ${identity.schema ?? "(unknown)"}`;
}

/**
 * The store of a stack's state in its chosen workspace, the directory it keeps files in, the
 * stack's workspace catalog and the state's identity. Does no I/O but reading the selected
 * workspace's name.
 */
export function openStateStore(location: StateLocation): OpenedState & { identity: StateIdentity; mover: StateMover } {
  const path = statePathOf(location);
  const dir = dirname(path);
  const workspace = chosenWorkspace(location.workspace, dir, location.stackName);
  const stack = location.stackName;
  if (backendTypeOf(location) === "local") {
    const workspaces = new LocalWorkspaces(path, stack);
    const file = workspaceStatePath(path, workspace);
    // The default state file of a stack named P.W is workspace W's of stack P (./name-collisions.ts).
    const collision = () => checkStackName(location.stackFile, stack, dir, relative(process.cwd(), path) || path);
    const named = { workspace: { name: workspace, exists: () => workspaces.exists(workspace) } };
    const check = workspace !== DEFAULT_WORKSPACE ? named : location.state === undefined ? { collision } : {};
    const identity: StateIdentity = {
      type: "local",
      workspace,
      path: relative(dirname(resolve(location.stackFile)), file)
        .split(sep)
        .join("/"),
    };
    const store = localStateStore(file, { stack, ...check });
    return { store, mover: store, dir, workspace, workspaces, stack, type: "local", identity };
  }
  if (location.state !== undefined) {
    throw new UserError(
      error(`--state names a local state file, but the state of stack "${stack}" is on PostgreSQL`, {
        code: "state/backend",
        detail: "Drop --state, or choose the local file with --backend local.",
      }),
    );
  }
  const schema = (location.backend?.type === "postgres" ? location.backend.schema : undefined) ?? DEFAULT_PG_SCHEMA;
  const workspaces = new PostgresWorkspaces(postgresStateStore({ stack, schema }), stack, schema);
  const store = postgresStateStore({ stack, schema, workspace });
  const identity: StateIdentity = { type: "postgres", workspace, schema };
  return { store, mover: store, dir, workspace, workspaces, stack, type: "postgres", identity };
}

/** A state file opened for no stack in particular (only `--state` without a stack file): the default workspace only. */
export function bareStateFile(path: string, workspace?: string): OpenedState {
  if (workspace !== undefined && workspace !== DEFAULT_WORKSPACE) {
    throw new UserError(
      error(`--workspace ${workspace} needs the stack file: a --state file alone is the default workspace`, {
        code: "state/workspace",
        detail: "Name the stack file with -f.",
      }),
    );
  }
  const file = resolve(path);
  return {
    store: localStateStore(file),
    dir: dirname(file),
    workspace: DEFAULT_WORKSPACE,
    workspaces: new LocalWorkspaces(file, basename(file, ".json")),
    type: "local",
  };
}
