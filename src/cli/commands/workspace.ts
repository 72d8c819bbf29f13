// `converge workspace list|new|select|show|delete`: several states of one stack, as Terraform's
// workspaces. They load the stack file only for its name and backend: no variables, no cloud, no
// state read, but `delete`'s check that the workspace manages nothing.
import type { Command } from "commander";
import { error, UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { withStateLock } from "../../engine/session.js";
import { checkWorkspaceName, DEFAULT_WORKSPACE, missingWorkspace, selectWorkspace } from "../../state/workspace.js";
import {
  action,
  backendOption,
  openedStateOf,
  STACK_FILE_HELP,
  STATE_OPTION_HELP,
  type StateCommandOptions,
  writeOut,
} from "../common.js";
import { EXIT } from "../exit-codes.js";
import { durationMs } from "../deadline.js";

interface WorkspaceOptions extends StateCommandOptions {
  json?: boolean;
  force?: boolean;
  lockTimeout?: string;
}

function options(cmd: Command): Command {
  return cmd
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .addOption(backendOption());
}

/** The stack's workspaces and the current one (no --workspace: the selection decides). */
async function opened(o: WorkspaceOptions) {
  const { workspace, ...rest } = o;
  void workspace;
  const s = await openedStateOf(rest);
  if (s.stack === undefined)
    throw new UserError(error("workspaces need the stack file: name it with -f", { code: "state/workspace" }));
  return { ...s, stack: s.stack };
}

async function list(o: WorkspaceOptions): Promise<number> {
  const s = await opened(o);
  const names = await s.workspaces.list();
  if (o.json) await writeOut(jsonText({ current: s.workspace, workspaces: names }, 2) + "\n");
  else await writeOut(names.map((n) => terminalText(`${n === s.workspace ? "*" : " "} ${n}`)).join("\n") + "\n");
  return EXIT.ok;
}

async function create(name: string, o: WorkspaceOptions): Promise<number> {
  checkWorkspaceName(name);
  const s = await opened(o);
  const note = await s.workspaces.create(name);
  await selectWorkspace(s.dir, s.stack, name);
  await writeOut(
    `${note ? `${note}\n` : ""}Created and switched to workspace "${name}" (` +
      `${s.workspaces.describe()}).\nIt has no state yet: the next apply writes its first.\n`,
  );
  return EXIT.ok;
}

async function select(name: string, o: WorkspaceOptions): Promise<number> {
  checkWorkspaceName(name);
  const s = await opened(o);
  if (!(await s.workspaces.exists(name))) throw missingWorkspace(name, s.workspaces.describe());
  await selectWorkspace(s.dir, s.stack, name);
  await writeOut(`Switched to workspace "${name}".\n`);
  return EXIT.ok;
}

async function remove(name: string, o: WorkspaceOptions): Promise<number> {
  checkWorkspaceName(name);
  const s = await opened(o);
  if (name === DEFAULT_WORKSPACE)
    throw new UserError(error(`the "default" workspace cannot be deleted`, { code: "state/workspace" }));
  if (name === s.workspace)
    throw new UserError(
      error(`workspace "${name}" is the current workspace: it cannot be deleted`, {
        code: "state/workspace",
        detail: "Switch to another one first: converge workspace select default.",
      }),
    );
  if (!(await s.workspaces.exists(name))) throw missingWorkspace(name, s.workspaces.describe());
  const target = await openedStateOf({ ...o, workspace: name });
  await withStateLock(target.store, "workspace delete", durationMs(o.lockTimeout), async () => {
    const state = await target.store.read();
    const n = state?.resources.length ?? 0;
    if (n > 0 && !o.force) {
      throw new UserError(
        error(
          `workspace "${name}" manages ${n} resource${n === 1 ? "" : "s"} (` +
            `${target.store.describe()}): refusing to delete it`,
          {
            code: "state/workspace-not-empty",
            detail:
              `Destroy them first (converge destroy --workspace ${name}), or delete it with --force: ` +
              `converge then forgets them and their grants stay in the cloud, unmanaged.`,
          },
        ),
      );
    }
    await s.workspaces.drop(name);
    await writeOut(
      `Deleted workspace "${name}"` +
        `${n > 0 ? ` (its ${n} resources are no longer managed: their grants stay in the cloud)` : ""}.\n`,
    );
  });
  return EXIT.ok;
}

export function registerWorkspace(program: Command): void {
  const ws = program
    .command("workspace")
    .description("Manage workspaces: several states of one stack (never touches the cloud)");
  options(ws.command("list").description("List the workspaces; * marks the current one"))
    .option("--json", "print JSON")
    .action(action((o: WorkspaceOptions) => list(o)));
  options(ws.command("new").argument("<name>").description("Create a workspace and switch to it")).action(
    action((name: string, o: WorkspaceOptions) => create(name, o)),
  );
  options(
    ws.command("select").argument("<name>").description("Switch to a workspace (recorded in state/{stack}.workspace)"),
  ).action(action((name: string, o: WorkspaceOptions) => select(name, o)));
  options(ws.command("show").description("Print the current workspace")).action(
    action(async (o: WorkspaceOptions) => {
      await writeOut(`${(await opened(o)).workspace}\n`);
      return EXIT.ok;
    }),
  );
  options(
    ws
      .command("delete")
      .argument("<name>")
      .description("Delete a workspace and its state (refused while it manages resources, unless --force)"),
  )
    .option("--force", "delete it even though its state manages resources (they stay in the cloud, unmanaged)")
    .option("--lock-timeout <duration>", "wait this long for the workspace's state lock")
    .action(action((name: string, o: WorkspaceOptions) => remove(name, o)));
}
