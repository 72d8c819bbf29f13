// Where the PostgreSQL backend's connection comes from (the environment only, as libpq reads
// it) and how secrets are kept out of messages. No server needed.
import { describe, expect, it } from "vitest";
import { connectionFromEnv, scrub } from "../../src/state/postgres/connection.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";

describe("postgres connection from the environment", () => {
  it("DATABASE_URL wins; messages name host:port/database only; sslmode is read as libpq does", () => {
    const t = connectionFromEnv({
      DATABASE_URL: "postgres://ci:p%40ss-word@db.internal:6432/access?sslmode=require",
      PGHOST: "ignored",
    });
    expect(t.where).toBe("db.internal:6432/access");
    expect(t.config.connectionString).toContain("uselibpqcompat=true");
    expect(t.secrets).toContain("p@ss-word");
    expect(t.secrets).toContain("p%40ss-word");
  });

  it("PG* variables when there is no DATABASE_URL, PGSSLMODE mapped", () => {
    const t = connectionFromEnv({
      PGHOST: "10.0.0.5",
      PGPORT: "5433",
      PGUSER: "ci",
      PGPASSWORD: "pw-123",
      PGDATABASE: "team",
      PGSSLMODE: "require",
    });
    expect(t.config).toMatchObject({
      host: "10.0.0.5",
      port: 5433,
      user: "ci",
      password: "pw-123",
      database: "team",
      ssl: { rejectUnauthorized: false },
    });
    expect(t.where).toBe("10.0.0.5:5433/team");
    expect(connectionFromEnv({ PGSSLMODE: "verify-full" }).config.ssl).toBe(true);
    expect(connectionFromEnv({ PGSSLMODE: "disable" }).config.ssl).toBe(false);
  });

  it(
    "an unparsable DATABASE_URL is an error saying so, without " + "echoing it (not a connection to localhost:5432)",
    () => {
      for (const bad of ["postgres://ci:pw secret@db host:xx/db", "not a url at all s3cret"]) {
        let thrown: unknown;
        try {
          connectionFromEnv({ DATABASE_URL: bad });
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(UserError);
        const d = (thrown as UserError).diagnostics[0]!;
        expect(d.summary).toMatch(/DATABASE_URL could not be parsed/);
        expect(`${d.summary} ${d.detail}`).not.toContain("secret");
        expect(`${d.summary} ${d.detail}`).not.toContain("s3cret");
        expect(`${d.summary} ${d.detail}`).not.toContain("localhost:5432");
      }
    },
  );

  it("scrub removes the secrets and any URL's password", () => {
    const text = "failed for postgres://ci:pw-123@h/db and postgresql://x:other@h2/db with pw-123";
    expect(scrub(text, ["pw-123"])).toBe("failed for postgres://ci:***@h/db and postgresql://x:***@h2/db with ***");
  });
});
