// `state rm` and `state mv`: edits of the state alone (never the cloud), each under the state lock
// with a compare-and-swap write, for every front end.
import { isAddress } from "../language/addresses.js";
import { error, UserError } from "../diagnostics/diagnostic.js";
import type { State } from "../generated/schemas.js";
import { type StateStore, versionOf } from "../state/index.js";
import { withStateLock } from "./session.js";

/** What a command that needs a state says when there is none. */
export function noStateError(store: StateStore): UserError {
  return new UserError(
    error(`no state at ${store.describe()}`, {
      code: "state/none",
      detail: "Run converge apply or converge import first.",
    }),
  );
}

/** The state of `store`; a user error when there is none yet. */
export async function existingState(store: StateStore): Promise<State> {
  const s = await store.read();
  if (!s) throw noStateError(store);
  return s;
}

/** Forgets `addresses` (their grants stay in the cloud); all must be in the state. */
export function forgetResources(
  store: StateStore,
  addresses: readonly string[],
  lockTimeoutMs?: number,
): Promise<State> {
  return withStateLock(store, "state rm", lockTimeoutMs, async () => {
    const s = await existingState(store);
    const read = versionOf(s);
    const missing = addresses.filter((a) => !s.resources.some((r) => r.address === a));
    if (missing.length)
      throw new UserError({
        severity: "error",
        summary: `not in the state: ${missing.join(", ")}`,
        detail: "Nothing was removed.",
      });
    s.resources = s.resources.filter((r) => !addresses.includes(r.address));
    return store.write(s, read);
  });
}

/** Renames the resource `from` to `to` in the state, and every dependency on it. */
export function renameResource(store: StateStore, from: string, to: string, lockTimeoutMs?: number): Promise<State> {
  if (!isAddress(to)) {
    throw new UserError({
      severity: "error",
      summary: `"${to}" is not a valid resource address`,
      detail: 'An address is a name, or name["key"] or name[0] for an instance of a forEach.',
    });
  }
  return withStateLock(store, "state mv", lockTimeoutMs, async () => {
    const s = await existingState(store);
    const read = versionOf(s);
    const r = s.resources.find((x) => x.address === from);
    if (!r) throw new UserError({ severity: "error", summary: `${from} is not in the state` });
    if (s.resources.some((x) => x.address === to))
      throw new UserError({ severity: "error", summary: `${to} is already in the state` });
    r.address = to;
    for (const x of s.resources) x.dependencies = x.dependencies.map((d) => (d === from ? to : d));
    return store.write(s, read);
  });
}
