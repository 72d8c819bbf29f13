// node-postgres, required on its first use: only the postgres backend connects, so the CLI's
// start-up and the local backend do not load it.
import { createRequire } from "node:module";
import type Pg from "pg";

let loaded: typeof Pg | undefined;

/** The pg module (CommonJS, so require loads it synchronously). */
export function pgModule(): typeof Pg {
  return (loaded ??= createRequire(import.meta.url)("pg") as typeof Pg);
}
