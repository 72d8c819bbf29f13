// What the request handlers share: the world, counters, faults and the durability hook.
import type { EmulatorWorld } from "../generated/schemas.js";
import type { Faults } from "./faults.js";
import type { Stats } from "./stats.js";
import type { Store } from "./store.js";

export interface EmulatorContext {
  store: Store;
  stats: Stats;
  faults: Faults;
  /** Re-reads the seed (file or in-memory); throws an Error with a clear message. */
  loadSeed(): EmulatorWorld;
  /** Resolves once the current world is durable; undefined when there is no data file. */
  commit(): Promise<void> | undefined;
  /** True once close() has begun: late requests are refused instead of changing the world. */
  closing: boolean;
  log: ((line: string) => void) | undefined;
}

/** One HTTP answer; `code` is the canonical status counted in stats ("OK" for success). */
export interface Reply {
  status: number;
  code: string;
  body: string;
  headers?: Record<string, string> | undefined;
}

export function ok(body: string): Reply {
  return { status: 200, code: "OK", body };
}
