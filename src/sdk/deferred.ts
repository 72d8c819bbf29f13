// `.apply` callbacks on values known only during apply (Pulumi runs them once the engine knows the
// value). While the program runs, such a callback is kept here under a number and its result is
// `{"fn::apply": [number, source]}` in the stack document: unknown at plan time ("(known after
// apply)"), and run by apply (src/apply/executor.ts) once the source is known. The registry is kept
// on globalThis, so the copy of converge a program imports and the CLI's share it; a program run in
// a worker thread (./program-isolated.ts) forwards the calls to that thread.
import { PROGRAM_APPLY } from "../language/functions.js";

type Callback = (value: unknown) => unknown;

interface Registry {
  next: number;
  callbacks: Map<number, Callback>;
  /** Runs a callback kept in another thread (the program's worker). */
  remote?: (id: number, value: unknown) => Promise<unknown>;
}

const KEY = Symbol.for("converge.sdk.deferred-applies");
const registry = ((globalThis as Record<symbol, unknown>)[KEY] ??= {
  next: 1,
  callbacks: new Map(),
}) as Registry;

/** The function name of a deferred callback in the stack document. */
export const DEFERRED_APPLY = PROGRAM_APPLY;

/** Keeps `fn` until apply runs it; its number. */
export function deferApply(fn: Callback): number {
  const id = registry.next++;
  registry.callbacks.set(id, fn);
  return id;
}

/** How many callbacks this thread keeps. */
export function deferredCount(): number {
  return registry.callbacks.size;
}

/** Sends the calls of callbacks this thread does not keep to `remote` (the program's thread). */
export function forwardDeferred(remote: ((id: number, value: unknown) => Promise<unknown>) | undefined): void {
  registry.remote = remote;
}

/** Runs the callback `id` on `value` (here, or in the thread that keeps it): its result. */
export async function runDeferred(id: number, value: unknown): Promise<unknown> {
  const fn = registry.callbacks.get(id);
  if (fn) return fn(value);
  if (registry.remote) return registry.remote(id, value);
  throw new Error("the program's function is no longer available (a saved plan is applied by another process)");
}
