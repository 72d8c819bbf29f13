// A stack's workspaces on PostgreSQL: `default`, those made with `workspace new` (a row in
// {schema}.workspaces), and any that holds a state. Dropping one removes its state, claims,
// pending write intents and migration fence in one transaction; its history stays (an audit trail outlives the
// workspace).
import { pgModule } from "./pg.js";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { DEFAULT_WORKSPACE, type WorkspaceCatalog } from "../workspace.js";
import { actorOf } from "./history.js";
import type { PostgresStateStore } from "./store.js";
import { inTransaction, withPoolClient } from "./connection.js";

export class PostgresWorkspaces implements WorkspaceCatalog {
  /** `store`: a store of the stack's default workspace, whose pool the catalog uses. */
  constructor(
    private readonly store: PostgresStateStore,
    private readonly stack: string,
    private readonly schema: string,
  ) {}

  private get q(): string {
    return pgModule().escapeIdentifier(this.schema);
  }

  describe(): string {
    return `postgres (schema ${this.schema}) stack "${this.stack}"`;
  }

  async list(): Promise<string[]> {
    const names = await this.store.query("list the workspaces", async (db) => {
      const r = await db.query<{ workspace: string }>(
        `SELECT workspace FROM ${this.q}.workspaces WHERE stack = $1 UNION SELECT ` +
          `workspace FROM ${this.q}.states WHERE stack = $1`,
        [this.stack],
      );
      return r.rows.map((row) => row.workspace).filter((w) => w !== DEFAULT_WORKSPACE);
    });
    return [DEFAULT_WORKSPACE, ...names.sort()];
  }

  async exists(name: string): Promise<boolean> {
    return name === DEFAULT_WORKSPACE || (await this.list()).includes(name);
  }

  async create(name: string): Promise<void> {
    const made = await this.store.query("create the workspace", async (db) => {
      if (name === DEFAULT_WORKSPACE) return false;
      const r = await db.query(
        `INSERT INTO ${this.q}.workspaces (stack, workspace, actor) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [this.stack, name, actorOf()],
      );
      return r.rowCount === 1;
    });
    if (!made)
      throw new UserError(
        error(`workspace "${name}" already exists (${this.describe()})`, { code: "state/workspace" }),
      );
  }

  async drop(name: string): Promise<void> {
    await this.store.query("delete the workspace", (db) =>
      withPoolClient(db, (client) =>
        inTransaction(client, async () => {
          const tables = ["states", "claims", "intents", "moves"];
          if (name !== DEFAULT_WORKSPACE) tables.push("workspaces");
          for (const table of tables) {
            await client.query(`DELETE FROM ${this.q}.${table} WHERE stack = $1 AND workspace = $2`, [
              this.stack,
              name,
            ]);
          }
        }),
      ),
    );
  }
}
