// The PostgreSQL connection, taken only from the environment as libpq takes it: DATABASE_URL, or
// PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE (node-postgres reads the PG*
// variables itself, and ~/.pgpass). Never from the stack file, and never printed: errors name
// the server by host, port and database only, with every secret scrubbed from the driver's text.
import type pg from "pg";
import { UserError, error } from "../../diagnostics/diagnostic.js";

export interface PgTarget {
  /** What node-postgres connects with. */
  config: pg.ClientConfig;
  /** "host:port/database", for messages (no user, no password). */
  where: string;
  /** Text never to print: the password, the whole URL. */
  secrets: string[];
}

/** How converge finds the server, for error details. */
const CONNECTION_HELP =
  "converge connects as libpq does: DATABASE_URL, or PGHOST, PGPORT, PGUSER, PGPASSWORD (or ~/.pgpass), " +
  "PGDATABASE and PGSSLMODE. The stack file never holds the connection.";

function urlParts(url: string): { host?: string; port?: string; database?: string; password?: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Its value may hold a password: not echoed.
    throw new UserError(
      error("DATABASE_URL could not be parsed as a URL; its value is not shown (it may hold a password)", {
        code: "state/postgres",
        detail:
          `Expected postgres://USER:PASSWORD@HOST:PORT/DATABASE (characters such as spaces, @ or : ` +
          `inside the user or password percent-encoded). ${CONNECTION_HELP}`,
      }),
    );
  }
  try {
    return {
      ...(u.hostname ? { host: decodeURIComponent(u.hostname) } : {}),
      ...(u.port ? { port: u.port } : {}),
      ...(u.pathname.length > 1 ? { database: decodeURIComponent(u.pathname.slice(1)) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    };
  } catch {
    return {};
  }
}

/** libpq's sslmode as node-postgres takes it (prefer and allow: no TLS, as node-postgres cannot fall back). */
function sslOf(mode: string): pg.ClientConfig["ssl"] {
  // encrypted, certificate not checked, as libpq's require
  if (mode === "require") return { rejectUnauthorized: false };
  if (mode === "verify-ca" || mode === "verify-full") return true;
  return false;
}

/**
 * The URL with `uselibpqcompat=true` when it sets an sslmode: node-postgres then reads sslmode as
 * libpq does (require: encrypted, certificate not checked; verify-full: checked) instead of
 * treating every mode as verify-full with a warning on stderr.
 */
function withLibpqSsl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.searchParams.has("sslmode") || u.searchParams.has("uselibpqcompat")) return url;
    u.searchParams.set("uselibpqcompat", "true");
    return u.href;
  } catch {
    return url;
  }
}

/**
 * PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE of `env` (unset ones: node-postgres's defaults, ~/.pgpass
 * included).
 */
function libpqVariables(env: NodeJS.ProcessEnv): pg.ClientConfig {
  return {
    ...(env.PGHOST ? { host: env.PGHOST } : {}),
    ...(env.PGPORT ? { port: Number(env.PGPORT) } : {}),
    ...(env.PGUSER ? { user: env.PGUSER } : {}),
    ...(env.PGPASSWORD !== undefined ? { password: env.PGPASSWORD } : {}),
    ...(env.PGDATABASE ? { database: env.PGDATABASE } : {}),
    ...(env.PGSSLMODE ? { ssl: sslOf(env.PGSSLMODE) } : {}),
  };
}

/** The connection the environment names. */
export function connectionFromEnv(env: NodeJS.ProcessEnv = process.env): PgTarget {
  const url = env.DATABASE_URL?.trim() ? env.DATABASE_URL : undefined;
  const parts = url ? urlParts(url) : {};
  const password = parts.password ?? env.PGPASSWORD;
  const secrets = [url, password, password !== undefined ? encodeURIComponent(password) : undefined].filter(
    (s): s is string => s !== undefined && s.length >= 3,
  );
  const host = parts.host ?? env.PGHOST ?? "localhost";
  const where =
    `${host}:${parts.port ?? env.PGPORT ?? "5432"}/` +
    `${parts.database ?? env.PGDATABASE ?? env.PGUSER ?? "(default database)"}`;
  const config: pg.ClientConfig = {
    ...(url ? { connectionString: withLibpqSsl(url) } : libpqVariables(env)),
    application_name: "converge",
    connectionTimeoutMillis: 15_000,
    keepAlive: true,
  };
  return { config, where, secrets };
}

/** `text` with every secret and any URL's password replaced by "***". */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(s).join("***");
  return out.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, "$1***@");
}

/** A failure of the server or the connection as a user diagnostic (UserErrors pass through). */
export function pgFailure(e: unknown, action: string, target: PgTarget, where: string): UserError {
  if (e instanceof UserError) return e;
  const raw = e instanceof Error ? e.message : String(e);
  const code = typeof (e as { code?: unknown })?.code === "string" ? ` [${(e as { code: string }).code}]` : "";
  const message = scrub(raw || "connection closed", target.secrets);
  return new UserError(
    error(`cannot ${action} in PostgreSQL (${target.where}): ${message}${code}`, {
      code: "state/postgres",
      file: where,
      detail: CONNECTION_HELP,
    }),
  );
}

/** Whether `e` says the connection is gone or silent (node-postgres's query timeout, or its end):
 *  nothing more is sent on it, and the pool must not hand it out again. */
function connectionDead(e: unknown): boolean {
  return e instanceof Error && /^(Query read timeout|Connection terminated\b)/.test(e.message);
}

/** Ends a failed transaction: ROLLBACK, unless the connection is dead (the server aborts the
 *  transaction when its session ends; a ROLLBACK would wait a whole query timeout more). */
export async function rollback(client: pg.ClientBase, e: unknown): Promise<void> {
  if (!connectionDead(e)) await client.query("ROLLBACK").catch(() => undefined);
}

/** Runs `fn` on a connection of `pool`; a connection found dead is dropped from the pool, not
 *  handed to the next query (a living one goes back to it). */
export async function withPoolClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let dead: Error | undefined;
  try {
    return await fn(client);
  } catch (e) {
    if (connectionDead(e)) dead = e as Error;
    throw e;
  } finally {
    client.release(dead);
  }
}

/** Runs `fn` in a transaction on `client`: COMMIT after it, and when it throws, rollback (above). */
export async function inTransaction<T>(client: pg.ClientBase, fn: () => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    const value = await fn();
    await client.query("COMMIT");
    return value;
  } catch (e) {
    await rollback(client, e);
    throw e;
  }
}

/** `work`, abandoned after `ms` (a connection that went silent never answers). */
export async function within(ms: number, work: () => Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
