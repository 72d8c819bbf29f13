// Entry point: builds the commander program from one module per command group. Only the named
// command's module loads (with what it imports); help, an unknown command or none load them all.
import { Command } from "commander";
import { versionText } from "../base/version.js";
import { optionHelp } from "./option-help.js";
import { terraformStyleFlag } from "./option-typos.js";
import { aProgramRan, letProgramHandlesGo } from "../sdk/program-handles.js";

type Register = (program: Command) => void;

/** Each command group's module and the commands it registers, in the order of `converge --help`. */
const COMMANDS: readonly { names: readonly string[]; load: () => Promise<Register> }[] = [
  { names: ["init"], load: async () => (await import("./commands/init.js")).registerInit },
  { names: ["plan"], load: async () => (await import("./commands/plan.js")).registerPlan },
  {
    names: ["apply", "destroy", "refresh", "output"],
    load: async () => (await import("./commands/apply.js")).registerApply,
  },
  { names: ["drift"], load: async () => (await import("./commands/drift.js")).registerDrift },
  { names: ["query"], load: async () => (await import("./commands/query.js")).registerQuery },
  { names: ["import"], load: async () => (await import("./commands/import.js")).registerImport },
  { names: ["show"], load: async () => (await import("./commands/show.js")).registerShow },
  { names: ["state", "force-unlock"], load: async () => (await import("./commands/state.js")).registerState },
  { names: ["workspace"], load: async () => (await import("./commands/workspace.js")).registerWorkspace },
  { names: ["validate"], load: async () => (await import("./commands/validate.js")).registerValidate },
  { names: ["graph"], load: async () => (await import("./commands/graph.js")).registerGraph },
  { names: ["policy"], load: async () => (await import("./commands/policy.js")).registerPolicy },
  { names: ["emulator"], load: async () => (await import("./commands/emulator.js")).registerEmulator },
];

/** The command groups to register: the one the first argument names, else every one. Commander
 *  dispatches on the first argument, so the others would not be used; a first -V or --version
 *  prints the version before any command is looked at. */
function commandsFor(argv: readonly string[]): typeof COMMANDS {
  const first = argv[2];
  if (first === "-V" || first === "--version") return [];
  const named = COMMANDS.filter((c) => first !== undefined && c.names.includes(first));
  return named.length ? named : COMMANDS;
}

// A write to stdout or stderr that failed, its reader gone (`converge apply | head`, EPIPE) or its
// terminal (EIO), is an interrupt: the command stops as on Ctrl-C and exits 141, or 129 for a
// terminal (./interrupt.ts, loaded with the command; never an uncaught error). Every later write
// fails again: reported once.
for (const name of ["stdout", "stderr"] as const) {
  process[name].on("error", (e: Error) => void import("./interrupt.js").then((m) => m.outputFailed(name, e)));
}

const program = new Command();
program
  .name("converge")
  .description("Declarative reconciler for cloud access policies")
  .version(versionText(), "-V, --version", "print the tool and provider schema versions")
  .showHelpAfterError()
  .configureHelp({
    sortSubcommands: false,
    optionDescription: (o) => optionHelp(o.description, o.defaultValue, o.defaultValueDescription),
  })
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
program.hook("preAction", async (_program, command) => {
  const [{ startCommandTimeout }, { UserError }, { printDiagnostics }, { EXIT }] = await Promise.all([
    import("./deadline.js"),
    import("../diagnostics/diagnostic.js"),
    import("./common.js"),
    import("./exit-codes.js"),
  ]);
  try {
    startCommandTimeout((command.opts() as { timeout?: string }).timeout);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    printDiagnostics(e.diagnostics);
    process.exit(EXIT.error);
  }
});

for (const register of await Promise.all(commandsFor(process.argv).map((c) => c.load()))) register(program);

const typo = terraformStyleFlag(program, process.argv);
if (typo) {
  process.stderr.write(`${typo}\n`);
  process.exit(1);
}

await program.parseAsync(process.argv);

// A program stack's servers, sockets or child processes still open do not keep the CLI alive: once
// the command is done (its output written, its state saved and the cloud closed), the process ends.
if (aProgramRan()) {
  const left = letProgramHandlesGo();
  if (left)
    process.stderr.write(
      `converge: the program stack left ${left} open; the command is done and converge does not wait for ` +
        `${left.startsWith("1 ") && !left.includes(" and ") ? "it" : "them"} (close what the program opens ` +
        `before its default export settles).\n`,
    );
  await Promise.all(
    [process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write("", () => resolve()))),
  );
  process.exit();
}
