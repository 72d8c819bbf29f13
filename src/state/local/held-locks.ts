// The state locks this process holds now (withLock registers each for as long as it holds it), so
// that a command stopped by a signal outside the phases that handle one (src/cli/interrupt.ts) can
// release them before it exits, instead of leaving a lock another host must force-unlock.
import type { StoreLock } from "../store.js";

const held = new Set<StoreLock>();

/** Records `lock` as held; the returned function forgets it. */
export function holding(lock: StoreLock): () => void {
  held.add(lock);
  return () => held.delete(lock);
}

/** Releases every lock held now; resolves with how many were released. */
export async function releaseHeldLocks(): Promise<number> {
  const locks = [...held];
  held.clear();
  const results = await Promise.allSettled(locks.map((l) => l.release()));
  return results.filter((r) => r.status === "fulfilled").length;
}
