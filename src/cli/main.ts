// Entry point: builds the commander program from one module per command group.
import { Command } from "commander";
import { versionText } from "../version.js";
import { UserError } from "../diagnostics/diagnostic.js";
import { EXIT, optionHelp, printDiagnostics } from "./common.js";
import { startCommandTimeout } from "./deadline.js";
import { registerApply } from "./commands/apply.js";
import { registerEmulator } from "./commands/emulator.js";
import { registerGraph } from "./commands/graph.js";
import { registerImport } from "./commands/import.js";
import { registerShow } from "./commands/show.js";
import { registerState } from "./commands/state.js";
import { registerPlan } from "./commands/plan.js";
import { registerValidate } from "./commands/validate.js";
import { registerWorkspace } from "./commands/workspace.js";

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
  .configureHelp({ sortSubcommands: false, optionDescription: (o) => optionHelp(o.description, o.defaultValue, o.defaultValueDescription) })
  .addHelpText(
    "after",
    `
Environment:
  CLOUDNATIVE_EMULATOR_HOST   send every call to this emulator (host:port); wins over the stack
  CLOUDNATIVE_ACCESS_TOKEN    bearer token (else Application Default Credentials for Google)
  HTTPS_PROXY, HTTP_PROXY     proxy for https / http calls; NO_PROXY lists exceptions
  CONVERGE_LOG=debug          log every call attempt to stderr (or to CONVERGE_LOG_PATH)
  CONVERGE_WORKSPACE          the workspace to use (as --workspace; wins over workspace select)
  CONVERGE_ACTOR              who writes, in the PostgreSQL history (default: the OS user)
  DATABASE_URL, PG*           the PostgreSQL connection of backend postgres (as libpq)
  NO_COLOR                    plain output`,
  );

// --timeout (stack commands): the command's time limit starts before its action runs.
program.hook("preAction", (_program, command) => {
  try {
    startCommandTimeout((command.opts() as { timeout?: string }).timeout);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    printDiagnostics(e.diagnostics);
    process.exit(EXIT.error);
  }
});

registerPlan(program);
registerApply(program);
registerImport(program);
registerShow(program);
registerState(program);
registerWorkspace(program);
registerValidate(program);
registerGraph(program);
registerEmulator(program);

await program.parseAsync(process.argv);
