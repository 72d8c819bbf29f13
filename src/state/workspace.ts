// Workspaces: several states of one stack (dev, staging, a feature branch), each with its own
// lock, as Terraform's. `default` always exists. Which one a command uses: --workspace, else
// CONVERGE_WORKSPACE, else the one `converge workspace select` recorded for this checkout in
// {state dir}/{stack}.workspace (a local file for both backends, as Terraform's
// .terraform/environment: a choice of this working copy, never shared through the database).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { makeDirs } from "../fs/regular-files.js";

export const DEFAULT_WORKSPACE = "default";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A workspace name's problem, or undefined when it is valid. */
export function workspaceNameProblem(name: string): string | undefined {
  return NAME.test(name)
    ? undefined
    : `"${name}" is not a valid workspace name: letters, digits, "_" and "-", ` +
        `starting with a letter or digit, at most 64 characters`;
}

export function checkWorkspaceName(name: string): string {
  const problem = workspaceNameProblem(name);
  if (problem) throw new UserError(error(problem, { code: "state/workspace" }));
  return name;
}

/** What every backend keeps per stack: its workspaces (the states live in the stores). */
export interface WorkspaceCatalog {
  /** For messages: where the workspaces are kept; never a secret. */
  describe(): string;
  /** Every workspace, `default` first, the rest sorted. */
  list(): Promise<string[]>;
  exists(name: string): Promise<boolean>;
  /**
   * Creates an empty workspace (no state until the first write); an existing one is an error.
   * Returns a note for the user when it changed something else (the local backend moves a deleted
   * workspace's last state aside, so that the new one's writes never replace it).
   */
  create(name: string): Promise<string | void>;
  /**
   * Removes the workspace's state (and, but for `default`, the workspace). The caller holds its
   * lock and has checked it may go. A backend with history keeps it.
   */
  drop(name: string): Promise<void>;
}

/** The file that records the workspace `select` chose, beside the stack's state files. */
export function selectionFile(stateDir: string, stack: string): string {
  return join(stateDir, `${stack}.workspace`);
}

/** --workspace, else CONVERGE_WORKSPACE, else the selection file, else `default`. */
export function chosenWorkspace(
  flag: string | undefined,
  stateDir: string,
  stack: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (flag !== undefined) return checkWorkspaceName(flag);
  const fromEnv = env.CONVERGE_WORKSPACE?.trim();
  if (fromEnv) return checkWorkspaceName(fromEnv);
  return selectedWorkspace(stateDir, stack) ?? DEFAULT_WORKSPACE;
}

/** The workspace recorded by `select`, if any. */
export function selectedWorkspace(stateDir: string, stack: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(selectionFile(stateDir, stack), "utf8").trim();
  } catch {
    return undefined;
  }
  return text ? checkWorkspaceName(text) : undefined;
}

export async function selectWorkspace(stateDir: string, stack: string, name: string): Promise<void> {
  await makeDirs(stateDir);
  await writeFileAtomic(selectionFile(stateDir, stack), `${name}\n`);
}

/** The error of a workspace that does not exist (Terraform's wording and advice). */
export function missingWorkspace(name: string, where: string): UserError {
  return new UserError(
    error(`workspace "${name}" does not exist (${where})`, {
      code: "state/no-workspace",
      detail:
        `Create it with \`converge workspace new ${name}\`, or list the ` +
        `workspaces with \`converge workspace list\`.`,
    }),
  );
}
