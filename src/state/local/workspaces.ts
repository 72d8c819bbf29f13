// The local backend's workspaces: `default` is state/{stack}.json, workspace W is
// state/{stack}.W.json, each with its own lock file beside it. Which workspaces exist is a list
// in {state dir}/{stack}.workspaces (one name a line), so a new workspace exists before its
// first write, as Terraform's `workspace new` makes one without a state.
import { lstat, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError, error } from "../../diagnostics/diagnostic.js";
import { writeFileAtomic } from "../../fs/atomic-file.js";
import { errnoCode, fsError, readTextIfExists } from "../../fs/errors.js";
import { keepOtherLineage, lineageIn, moveBackupAside, readKept } from "./kept-backups.js";
import { makeDirs, type FileRole } from "../../fs/regular-files.js";
import { movingFile } from "./moving-fence.js";
import { checkNewWorkspace } from "../name-collisions.js";
import { DEFAULT_WORKSPACE, type WorkspaceCatalog } from "../workspace.js";

/** The state file of `workspace`, given the default workspace's file. */
export function workspaceStatePath(defaultPath: string, workspace: string): string {
  if (workspace === DEFAULT_WORKSPACE) return defaultPath;
  return defaultPath.endsWith(".json")
    ? `${defaultPath.slice(0, -".json".length)}.${workspace}.json`
    : `${defaultPath}.${workspace}`;
}

export class LocalWorkspaces implements WorkspaceCatalog {
  private readonly registry: string;

  /** `defaultPath`: the default workspace's state file; `stack`: the stack's name. */
  constructor(
    private readonly defaultPath: string,
    private readonly stack: string,
  ) {
    this.registry = join(dirname(defaultPath), `${stack}.workspaces`);
  }

  describe(): string {
    return `local state files beside ${basename(this.defaultPath)} in ${dirname(this.defaultPath)}`;
  }

  private async names(): Promise<string[]> {
    const text = await readTextIfExists(this.registry, "read the workspace list");
    if (text === undefined) return [];
    return text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && l !== DEFAULT_WORKSPACE);
  }

  private async save(names: string[]): Promise<void> {
    try {
      await makeDirs(dirname(this.registry));
      await writeFileAtomic(this.registry, names.map((n) => `${n}\n`).join(""));
    } catch (e) {
      throw fsError(e, "write the workspace list", this.registry);
    }
  }

  async list(): Promise<string[]> {
    return [DEFAULT_WORKSPACE, ...[...new Set(await this.names())].sort()];
  }

  async exists(name: string): Promise<boolean> {
    return name === DEFAULT_WORKSPACE || (await this.names()).includes(name);
  }

  async create(name: string): Promise<string | undefined> {
    const names = await this.names();
    if (name === DEFAULT_WORKSPACE || names.includes(name))
      throw new UserError(
        error(`workspace "${name}" already exists`, { code: "state/workspace", file: this.registry }),
      );
    const file = workspaceStatePath(this.defaultPath, name);
    await checkNewWorkspace(file, this.stack, name);
    const kept = await keepDeletedBackup(file);
    await this.save([...names, name].sort());
    return (
      kept &&
      `The last state of a deleted workspace "${name}" (${file}.backup) was moved to ` +
        `${kept}: the new workspace's states do not replace it.`
    );
  }

  /**
   * The state file is kept as {file}.backup (the previous version's place), not deleted; `create` of the name moves it
   * aside.
   */
  async drop(name: string): Promise<void> {
    const file = workspaceStatePath(this.defaultPath, name);
    // A backup of another lineage there is another state's only copy: moved aside, not replaced.
    const text = await readKept(file, STATE_FILE);
    if (text !== undefined) await keepOtherLineage(file, lineageIn(text) ?? "", DELETED_BACKUP);
    try {
      await rename(file, `${file}.backup`);
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") throw fsError(e, "remove the state file", file);
    }
    // Its pending write intents go with it (as the PostgreSQL backend deletes its rows): a new
    // workspace of the same name must not settle them as its own.
    await rm(`${file}.intents`, { force: true }).catch((e: unknown) => {
      throw fsError(e, "remove the intent journal", `${file}.intents`);
    });
    // Last: a migrate's fence (./move-fence.ts), once the state it guarded is gone.
    await rm(movingFile(file), { force: true }).catch((e: unknown) => {
      throw fsError(e, "remove the migration fence", movingFile(file));
    });
    if (name !== DEFAULT_WORKSPACE) await this.save((await this.names()).filter((n) => n !== name));
  }
}

const DELETED_BACKUP: FileRole = {
  what: "state backup",
  detail: "converge keeps a deleted workspace's last state there, as a regular file. Move it away and run again.",
};

const STATE_FILE: FileRole = {
  what: "state file",
  detail: "converge keeps the state in a regular file (or a symlink to one). Move it away and run again.",
};

/**
 * A workspace being created has no state file; a {file}.backup there is a deleted workspace's last
 * state, which the new workspace's second write would replace. It is moved (never over another
 * file) to {file}.deleted-{lineage}-{serial}[-N].backup, mode 0600; returns that name.
 */
async function keepDeletedBackup(file: string): Promise<string | undefined> {
  const stateThere = await lstat(file).then(
    () => true,
    (e: unknown) => (errnoCode(e) === "ENOENT" ? false : Promise.reject(fsError(e, "read state file", file))),
  );
  if (stateThere) return undefined; // its backup is its own
  const text = await readKept(`${file}.backup`, DELETED_BACKUP);
  return text === undefined ? undefined : moveBackupAside(file, text);
}
