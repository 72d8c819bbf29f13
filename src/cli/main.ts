// Entry point: builds the commander program from one module per command group.
import { Command } from "commander";
import { versionText } from "../version.js";
import { registerApply } from "./commands/apply.js";
import { registerEmulator } from "./commands/emulator.js";
import { registerGraph } from "./commands/graph.js";
import { registerImport } from "./commands/import.js";
import { registerState } from "./commands/state.js";
import { registerPlan } from "./commands/plan.js";
import { registerValidate } from "./commands/validate.js";

// A closed pipe (`converge plan --json | head`) is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const program = new Command();
program
  .name("converge")
  .description("Declarative reconciler for cloud access policies")
  .version(versionText(), "-V, --version", "print the tool and provider schema versions")
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: false });

registerPlan(program);
registerApply(program);
registerImport(program);
registerState(program);
registerValidate(program);
registerGraph(program);
registerEmulator(program);

await program.parseAsync(process.argv);
