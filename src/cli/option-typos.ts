// Terraform's flags take one dash (`-var-file=dev.yaml`, `-auto-approve`); converge's long options
// take two. Commander reads `-var-file=dev.yaml` as short options and says only "unknown option":
// a single-dash word that is one of the command's long options gets a "did you mean" instead.
import type { Command } from "commander";

/** The command `argv` names (subcommands followed: `state list`), or undefined. */
function commandOf(
  program: Command,
  argv: readonly string[],
): { command: Command; rest: readonly string[] } | undefined {
  let command = program;
  let i = 2;
  for (; i < argv.length; i++) {
    const sub = command.commands.find((c) => c.name() === argv[i] || c.aliases().includes(argv[i]!));
    if (!sub) break;
    command = sub;
  }
  return command === program ? undefined : { command, rest: argv.slice(i) };
}

/** The message for the first Terraform-style flag in `argv` that is a long option of its
 *  command, or undefined. Arguments after `--` are not options. */
export function terraformStyleFlag(program: Command, argv: readonly string[]): string | undefined {
  const found = commandOf(program, argv);
  if (!found) return undefined;
  const longs = new Set(found.command.options.flatMap((o) => (o.long ? [o.long] : [])));
  for (const arg of found.rest) {
    if (arg === "--") return undefined;
    const m = /^-([a-z][a-z0-9-]+)(=.*)?$/.exec(arg);
    if (m && longs.has(`--${m[1]}`)) {
      return (
        `error: unknown option '${arg}' (did you mean --${m[1]}` +
        `${m[2] ?? ""}? converge's long options take two dashes)`
      );
    }
  }
  return undefined;
}
