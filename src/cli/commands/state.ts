import type { Command } from "commander";
import { UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import type { StateStore } from "../../state/index.js";
import { action, EXIT, STACK_FILE_HELP, STATE_OPTION_HELP, stateStoreOf, underLock, writeOut } from "../common.js";

interface StateCliOptions {
  file?: string;
  state?: string;
  json?: boolean;
  lockTimeout?: string;
}

async function readOrFail(store: StateStore) {
  const s = await store.read();
  if (!s) throw new UserError({ severity: "error", summary: `no state at ${store.path}`, detail: "Run converge apply or converge import first." });
  return s;
}

function common(cmd: Command): Command {
  return cmd
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .option("--lock-timeout <duration>", "wait this long for the state lock")
    .option("--json", "print JSON");
}

export function registerState(program: Command): void {
  const state = program.command("state").description("Inspect and edit the state (never touches the cloud)");

  common(state.command("list").description("List the addresses in the state")).action(
    action(async (o: StateCliOptions) => {
      const s = await readOrFail(stateStoreOf(o));
      if (o.json) await writeOut(jsonText(s.resources.map((r) => ({ address: r.address, type: r.type, id: r.id })), 2) + "\n");
      else await writeOut(s.resources.map((r) => terminalText(r.address)).join("\n") + (s.resources.length ? "\n" : ""));
    }),
  );

  common(state.command("show").argument("<address>").description("Show one resource from the state")).action(
    action(async (address: string, o: StateCliOptions) => {
      const s = await readOrFail(stateStoreOf(o));
      const r = s.resources.find((x) => x.address === address);
      if (!r) throw new UserError({ severity: "error", summary: `${address} is not in the state`, detail: `Addresses: ${s.resources.map((x) => x.address).join(", ") || "(none)"}.` });
      if (o.json) await writeOut(jsonText(r, 2) + "\n");
      else {
        const pad = Math.max(...Object.keys(r.outputs).map((k) => k.length));
        const lines = [`# ${r.address}:`, `resource "${r.type}" "${r.address}" {`];
        for (const [k, v] of Object.entries(r.outputs).sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`    ${k.padEnd(pad)} = ${JSON.stringify(v)}`);
        lines.push("}");
        await writeOut(lines.map(terminalText).join("\n") + "\n"); // the state holds what the server said
      }
    }),
  );

  common(state.command("rm").argument("<addresses...>").description("Forget resources (the grants stay in the cloud)")).action(
    action(async (addresses: string[], o: StateCliOptions) => {
      const store = stateStoreOf(o);
      return underLock(store, "state rm", o, async () => {
        const s = await readOrFail(store);
        const missing = addresses.filter((a) => !s.resources.some((r) => r.address === a));
        if (missing.length) throw new UserError({ severity: "error", summary: `not in the state: ${missing.join(", ")}`, detail: "Nothing was removed." });
        s.resources = s.resources.filter((r) => !addresses.includes(r.address));
        await store.write(s);
        await writeOut(`Removed ${addresses.length} resource${addresses.length === 1 ? "" : "s"} from the state: ${addresses.join(", ")}.\nTheir grants are still in the cloud; converge no longer manages them.\n`);
        return EXIT.ok;
      });
    }),
  );

  common(state.command("mv").argument("<from>").argument("<to>").description("Rename a resource in the state")).action(
    action(async (from: string, to: string, o: StateCliOptions) => {
      const store = stateStoreOf(o);
      if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(to)) throw new UserError({ severity: "error", summary: `"${to}" is not a valid resource name` });
      return underLock(store, "state mv", o, async () => {
        const s = await readOrFail(store);
        const r = s.resources.find((x) => x.address === from);
        if (!r) throw new UserError({ severity: "error", summary: `${from} is not in the state` });
        if (s.resources.some((x) => x.address === to)) throw new UserError({ severity: "error", summary: `${to} is already in the state` });
        r.address = to;
        for (const x of s.resources) x.dependencies = x.dependencies.map((d) => (d === from ? to : d));
        await store.write(s);
        await writeOut(`Moved ${from} to ${to}.\n`);
        return EXIT.ok;
      });
    }),
  );

  program
    .command("force-unlock")
    .argument("<lockId>")
    .description("Remove a state lock that cannot be checked (e.g. held by another host)")
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .action(
      action(async (lockId: string, o: StateCliOptions) => {
        await stateStoreOf(o).forceUnlock(lockId);
        await writeOut(`converge state has been unlocked (lock ${lockId}).\n`);
        return EXIT.ok;
      }),
    );
}
