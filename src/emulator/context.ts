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
  /** The list methods' page sizes: the default (no pageSize) and the maximum (a larger one is cut). */
  paging: PageSizes;
}

export interface PageSizes {
  defaultSize: number;
  maxSize: number;
}

/** Google documents neither for these methods; a test sets smaller ones (EmulatorOptions.pageSizes). */
export const DEFAULT_PAGE_SIZES: PageSizes = { defaultSize: 50, maxSize: 1000 };

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
