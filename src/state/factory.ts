// Where a stack's state lives, chosen in one place: every command that reads or writes a state
// gets its store here. Today the local file backend; a backend chosen by the stack or a flag
// plugs in here and nowhere else.
import { dirname, resolve } from "node:path";
import { defaultStatePath } from "./format.js";
import { localStateStore } from "./local.js";
import type { StateStore } from "./store.js";

export interface StateLocation {
  /** The stack file: the default state sits beside it. */
  stackFile: string;
  /** The stack the state must belong to. */
  stackName: string;
  /** An explicit state file (--state). */
  state?: string;
}

/** --state, else state/{stack name}.json in the directory of the stack file. */
export function statePathOf(location: StateLocation): string {
  return location.state !== undefined ? resolve(location.state) : defaultStatePath(dirname(resolve(location.stackFile)), location.stackName);
}

/** The store of a stack's state, and the directory it keeps files in (the embedded emulator's world). */
export function openStateStore(location: StateLocation): { store: StateStore; dir: string } {
  const path = statePathOf(location);
  return { store: localStateStore(path, { stack: location.stackName }), dir: dirname(path) };
}

/** A state file opened for no stack in particular (only `--state` without a stack file). */
export function openStateFile(path: string): StateStore {
  return localStateStore(resolve(path));
}
