// Stack and workspace names whose local state files would be one file. Stack P's workspace W keeps
// its state in {state dir}/P.W.json, which is also the default state file of a stack named "P.W"
// (stack names may hold dots, workspace names may not): whichever comes second is refused where
// its name is given, so that no two states share a file (nor its .backup, lock or intents). The
// embedded emulator's world has a name no state can have (../connect/cloud.ts).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { UserError, error } from "../diagnostics/diagnostic.js";
import { readTextIfExists } from "../fs/errors.js";
import { workspaceNameProblem } from "./workspace.js";

/** Where `name` is given in the stack file (its first occurrence as a whole word), for the error. */
async function namePosition(stackFile: string, name: string): Promise<{ line?: number; column?: number }> {
  const text = await readFile(stackFile, "utf8").catch(() => "");
  const lines = text.split("\n");
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const word = new RegExp(`(?<![\\w.-])${escaped}(?![\\w.-])`);
  for (let i = 0; i < lines.length; i++) {
    const m = word.exec(lines[i]!);
    if (m) return { line: i + 1, column: m.index + 1 };
  }
  return {};
}

/** The workspaces stack `stack` lists in {state dir}/{stack}.workspaces. */
async function listedWorkspaces(dir: string, stack: string): Promise<string[]> {
  const file = join(dir, `${stack}.workspaces`);
  return ((await readTextIfExists(file, "read the workspace list")) ?? "").split("\n").map((l) => l.trim());
}

/**
 * For the default state file of stack `stack` ({dir}/{stack}.json): refuses a stack named P.W when
 * stack P has a workspace W, whose state file it is.
 */
export async function checkStackName(stackFile: string, stack: string, dir: string, stateFile: string): Promise<void> {
  const dot = stack.lastIndexOf(".");
  if (dot <= 0) return;
  const [owner, workspace] = [stack.slice(0, dot), stack.slice(dot + 1)];
  if (workspaceNameProblem(workspace) || !(await listedWorkspaces(dir, owner)).includes(workspace)) return;
  const theirs = `the state of workspace "${workspace}" of stack "${owner}"`;
  const summary = `stack name "${stack}" names the state file ${stateFile}, ${theirs}`;
  throw new UserError(
    error(summary, {
      code: "state/name-collision",
      file: stackFile,
      ...(await namePosition(stackFile, stack)),
      detail:
        "Two states cannot share a file. Rename this stack (its state then is state/{new name}.json), " +
        "or give it its own directory or --state file.",
    }),
  );
}

/** The stack a state file records ("" when it holds something else); undefined when there is no file. */
async function stackIn(file: string): Promise<string | undefined> {
  const text = await readTextIfExists(file, "read state file");
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { stack?: unknown } | null;
    return typeof v?.stack === "string" ? v.stack : "";
  } catch {
    return "";
  }
}

/** Refuses workspace `name` of `stack` when its state file holds another stack's state (stack {stack}.{name}'s). */
export async function checkNewWorkspace(file: string, stack: string, name: string): Promise<void> {
  const owner = await stackIn(file);
  if (owner === undefined || owner === stack) return;
  const whose = owner ? `the state of stack "${owner}"` : "a file that is not a state of this stack";
  throw new UserError(
    error(`workspace "${name}" of stack "${stack}" would keep its state in ${file}, which holds ${whose}`, {
      code: "state/name-collision",
      file,
      detail: "Two states cannot share a file: choose another workspace name.",
    }),
  );
}
