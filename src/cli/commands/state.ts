import type { Command } from "commander";
import { redactState } from "../../config/redact.js";
import { UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { existingState, forgetResources, renameResource } from "../../engine/state-edits.js";
import {
  action,
  backendOption,
  printLines,
  STACK_FILE_HELP,
  STATE_OPTION_HELP,
  stateStoreOf,
  WORKSPACE_OPTION_HELP,
  writeOut,
} from "../common.js";
import { EXIT } from "../exit-codes.js";
import { durationMs } from "../deadline.js";
import { resourceLines } from "../render/values.js";
import { seg } from "../../diagnostics/lines.js";
import { registerStateMigrate } from "./state-migrate.js";
import { registerStateTeam } from "./state-team.js";
import { counted, listed, NAMES_IN_DETAIL } from "../../diagnostics/listed.js";
import type { State, WriteIntent } from "../../generated/schemas.js";

interface StateCliOptions {
  file?: string;
  state?: string;
  backend?: "local" | "postgres";
  workspace?: string;
  json?: boolean;
  lockTimeout?: string;
}

function common(cmd: Command): Command {
  return cmd
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .addOption(backendOption())
    .option("--workspace <name>", WORKSPACE_OPTION_HELP)
    .option("--lock-timeout <duration>", "wait this long for the state lock")
    .option("--json", "print JSON");
}

async function showResource(address: string, o: StateCliOptions): Promise<void> {
  const store = await stateStoreOf(o);
  const s = redactState(await existingState(store));
  const r = s.resources.find((x) => x.address === address);
  const pending = await store.pendingIntents();
  if (!r) {
    const waiting = settledLines(s, address, pending).map((t) => t.replace(/^# /, ""));
    throw new UserError({
      severity: "error",
      summary: `${address} is not in the state`,
      detail: [
        `Addresses: ${
          listed(
            s.resources.map((x) => x.address),
            NAMES_IN_DETAIL,
          ) || "(none)"
        }.`,
        ...waiting,
      ].join("\n"),
    });
  }
  if (o.json) await writeOut(jsonText(r, 2) + "\n");
  // Nested values as the plan lays them out; the line renderer neutralises what the server said.
  else
    await printLines(
      [...resourceLines(r.address, r.type, r.outputs), ...settledLines(s, address, pending).map((t) => [seg(t)])],
      o,
    );
}

/** What `state show` says of writes an interrupted run left: settled into this resource, or pending. */
function settledLines(s: State, address: string, pending: readonly WriteIntent[]): string[] {
  const out: string[] = [];
  if (s.settled?.recorded.includes(address))
    out.push(
      `# recorded ${s.settled.at} from a write of an interrupted run that landed ` +
        `(settled against the live policy: converge's own)`,
    );
  const waiting = pending.filter((i) => i.changes.some((c) => c.address === address)).length;
  if (waiting)
    out.push(
      `# ${waiting} write${waiting === 1 ? "" : "s"} of an interrupted run on it pending: the next plan or ` +
        `apply settles ${waiting === 1 ? "it" : "them"} against the live policy`,
    );
  return out;
}

export function registerState(program: Command): void {
  const state = program.command("state").description("Inspect and edit the state (never touches the cloud)");

  common(state.command("list").description("List the addresses in the state")).action(
    action(async (o: StateCliOptions) => {
      // No state yet lists nothing, as an empty one does (as `terraform state list`): scripts that
      // loop over the addresses work before the first apply.
      const read = await (await stateStoreOf(o)).read();
      const resources = read ? redactState(read).resources : [];
      if (o.json)
        await writeOut(
          jsonText(
            resources.map((r) => ({ address: r.address, type: r.type, id: r.id })),
            2,
          ) + "\n",
        );
      else await writeOut(resources.map((r) => terminalText(r.address)).join("\n") + (resources.length ? "\n" : ""));
    }),
  );

  common(state.command("show").argument("<address>").description("Show one resource from the state")).action(
    action(showResource),
  );

  common(
    state.command("rm").argument("<addresses...>").description("Forget resources (the grants stay in the cloud)"),
  ).action(
    action(async (addresses: string[], o: StateCliOptions) => {
      await forgetResources(await stateStoreOf(o), addresses, durationMs(o.lockTimeout));
      await writeOut(
        `Removed ${counted(addresses.length, "resource")} from the state: ${addresses.join(", ")}.\nTheir ` +
          `grants are still in the cloud; converge no longer manages them.\n`,
      );
      return EXIT.ok;
    }),
  );

  common(state.command("mv").argument("<from>").argument("<to>").description("Rename a resource in the state")).action(
    action(async (from: string, to: string, o: StateCliOptions) => {
      await renameResource(await stateStoreOf(o), from, to, durationMs(o.lockTimeout));
      await writeOut(`Moved ${from} to ${to}.\n`);
      return EXIT.ok;
    }),
  );

  registerStateTeam(state, common);
  registerStateMigrate(state, common);

  program
    .command("force-unlock")
    .argument("<lockId>")
    .description("Remove a state lock that cannot be checked (e.g. held by another host)")
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .addOption(backendOption())
    .option("--workspace <name>", WORKSPACE_OPTION_HELP)
    .action(
      action(async (lockId: string, o: StateCliOptions) => {
        await (await stateStoreOf(o)).forceUnlock(lockId);
        await writeOut(`converge state has been unlocked (lock ${lockId}).\n`);
        return EXIT.ok;
      }),
    );
}
