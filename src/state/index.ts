// State (SPEC section 7): the local JSON backend, its lock, and the state file format.
export { defaultStatePath, newState, serializeState, STATE_FORMAT_VERSION } from "./format.js";
export { parseState } from "./parse-state.js";
export { type LocalStateStore, localStateStore, withLock, type StateStoreOptions } from "./local/store.js";
export {
  type HistoryRecord,
  type LockHolder,
  stateConflict,
  type StateStore,
  type StateVersion,
  type StoreLock,
  versionOf,
  type WriteMeta,
} from "./store.js";
export type { LockHandle, LockInfo, LockOptions } from "./local/lock.js";
export type { State, StateResource } from "../generated/schemas.js";
