// The local backend's workspaces: `default` is state/{stack}.json, workspace W is
// state/{stack}.W.json, each with its own lock file beside it. Which workspaces exist is a list
// in {state dir}/{stack}.workspaces (one name a line), so a new workspace exists before its
// first write, as Terraform's `workspace new` makes one without a state.
import { constants } from "node:fs";
import { chmod, copyFile, link, lstat, open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { errnoCode, fsError, fsyncDir } from "./fsutil.js";
import { makeDirs, openRegular, type FileRole } from "./regular-files.js";
import { DEFAULT_WORKSPACE, type WorkspaceCatalog } from "./workspace.js";

/** The state file of `workspace`, given the default workspace's file. */
export function workspaceStatePath(defaultPath: string, workspace: string): string {
  if (workspace === DEFAULT_WORKSPACE) return defaultPath;
  return defaultPath.endsWith(".json") ? `${defaultPath.slice(0, -".json".length)}.${workspace}.json` : `${defaultPath}.${workspace}`;
}

export class LocalWorkspaces implements WorkspaceCatalog {
  private readonly registry: string;

  /** `defaultPath`: the default workspace's state file; `stack`: the stack's name. */
  constructor(
    private readonly defaultPath: string,
    stack: string,
  ) {
    this.registry = join(dirname(defaultPath), `${stack}.workspaces`);
  }

  describe(): string {
    return `local state files beside ${basename(this.defaultPath)} in ${dirname(this.defaultPath)}`;
  }

  private async names(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.registry, "utf8");
    } catch (e) {
      if (errnoCode(e) === "ENOENT") return [];
      throw fsError(e, "read the workspace list", this.registry);
    }
    return text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0 && l !== DEFAULT_WORKSPACE);
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
    if (name === DEFAULT_WORKSPACE || names.includes(name)) throw new UserError(error(`workspace "${name}" already exists`, { code: "state/workspace", file: this.registry }));
    const file = workspaceStatePath(this.defaultPath, name);
    const kept = await keepDeletedBackup(file);
    await this.save([...names, name].sort());
    return kept && `The last state of a deleted workspace "${name}" (${file}.backup) was moved to ${kept}: the new workspace's states do not replace it.`;
  }

  /** The state file is kept as {file}.backup (the previous version's place), not deleted; `create` of the name moves it aside. */
  async drop(name: string): Promise<void> {
    const file = workspaceStatePath(this.defaultPath, name);
    try {
      await rename(file, `${file}.backup`);
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") throw fsError(e, "remove the state file", file);
    }
    if (name !== DEFAULT_WORKSPACE) await this.save((await this.names()).filter((n) => n !== name));
  }
}

const DELETED_BACKUP: FileRole = {
  what: "state backup",
  detail: "converge keeps a deleted workspace's last state there, as a regular file. Move it away and run again.",
};

const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK", "ENOSYS", "EINVAL"]);

/** A state's lineage and serial, from its text, file-name safe ("unknown" for what is not there or not safe). */
function lineageAndSerial(text: string): string {
  let v: { lineage?: unknown; serial?: unknown } = {};
  try {
    v = (JSON.parse(text) as typeof v | null) ?? {};
  } catch {
    // an unreadable backup is kept all the same
  }
  const lineage = typeof v.lineage === "string" && /^[A-Za-z0-9-]{1,64}$/.test(v.lineage) ? v.lineage : "unknown";
  const serial = typeof v.serial === "number" && Number.isSafeInteger(v.serial) && v.serial >= 0 ? String(v.serial) : "unknown";
  return `${lineage}-${serial}`;
}

/**
 * A workspace being created has no state file; a {file}.backup there is a deleted workspace's last
 * state, which the new workspace's second write would replace. It is moved (never over another
 * file) to {file}.deleted-{lineage}-{serial}[-N].backup, mode 0600; returns that name.
 */
async function keepDeletedBackup(file: string): Promise<string | undefined> {
  const backup = `${file}.backup`;
  const stateThere = await lstat(file).then(
    () => true,
    (e: unknown) => (errnoCode(e) === "ENOENT" ? false : Promise.reject(fsError(e, "read state file", file))),
  );
  if (stateThere) return undefined; // its backup is its own
  const fh = await openRegular(backup, DELETED_BACKUP);
  if (!fh) return undefined;
  let text: string;
  try {
    text = await fh.readFile("utf8");
  } catch (e) {
    throw fsError(e, "read the state backup", backup);
  } finally {
    await fh.close();
  }
  const base = `${file}.deleted-${lineageAndSerial(text)}`;
  for (let n = 1; ; n++) {
    const to = `${base}${n === 1 ? "" : `-${n}`}.backup`;
    try {
      await linkOrCopy(backup, to);
    } catch (e) {
      if (errnoCode(e) === "EEXIST") continue;
      throw fsError(e, "keep the deleted workspace's state as", to);
    }
    await chmod(to, 0o600);
    await fsyncDir(dirname(to));
    await rm(backup);
    return to;
  }
}

/** A second name for `from` (a copy, fsynced, where hard links are unsupported); EEXIST when `to` exists. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
    return;
  } catch (e) {
    if (!NO_HARD_LINKS.has(errnoCode(e) ?? "")) throw e;
  }
  await copyFile(from, to, constants.COPYFILE_EXCL);
  const fh = await open(to, "r+");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
