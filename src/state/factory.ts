// Where a stack's state lives, chosen in one place: every command that reads or writes a state
// gets its store here. The stack's `backend:` (or --backend) picks the local file (the default)
// or PostgreSQL, whose connection comes only from the environment.
import { dirname, resolve } from "node:path";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { defaultStatePath } from "./format.js";
import { localStateStore } from "./local.js";
import { DEFAULT_PG_SCHEMA, postgresStateStore } from "./postgres/store.js";
import type { StateStore } from "./store.js";

export type BackendType = "local" | "postgres";
export const BACKEND_TYPES: readonly BackendType[] = ["local", "postgres"];

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
}

/** --state, else state/{stack name}.json in the directory of the stack file. */
export function statePathOf(location: StateLocation): string {
  return location.state !== undefined ? resolve(location.state) : defaultStatePath(dirname(resolve(location.stackFile)), location.stackName);
}

/**
 * The store of a stack's state, and the directory it keeps files in (the embedded emulator's
 * world, beside the stack file whatever the backend).
 */
export function openStateStore(location: StateLocation): { store: StateStore; dir: string } {
  const path = statePathOf(location);
  const type = location.backendType ?? location.backend?.type ?? "local";
  if (type === "local") return { store: localStateStore(path, { stack: location.stackName }), dir: dirname(path) };
  if (location.state !== undefined) {
    throw new UserError(
      error(`--state names a local state file, but the state of stack "${location.stackName}" is on PostgreSQL`, {
        code: "state/backend",
        detail: "Drop --state, or choose the local file with --backend local.",
      }),
    );
  }
  const schema = location.backend?.type === "postgres" ? location.backend.schema : undefined;
  return { store: postgresStateStore({ stack: location.stackName, schema: schema ?? DEFAULT_PG_SCHEMA }), dir: dirname(path) };
}

/** A state file opened for no stack in particular (only `--state` without a stack file). */
export function openStateFile(path: string): StateStore {
  return localStateStore(resolve(path));
}
