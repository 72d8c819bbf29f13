// The state backends by name: what --backend, the stack's backend.type and state migrate accept.
// A module of its own so that naming them loads none of them (src/cli/common.ts, for validate).
export type BackendType = "local" | "postgres";
export const BACKEND_TYPES: readonly BackendType[] = ["local", "postgres"];
