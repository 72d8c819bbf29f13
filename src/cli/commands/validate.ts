import type { Command } from "commander";
import { loadStackFile } from "../../config/load.js";
import { hasErrors } from "../../diagnostics/diagnostic.js";
import { jsonText } from "../../diagnostics/terminal-text.js";
import { action, EXIT, printDiagnostics, writeOut } from "../common.js";

export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description("Check the stack without reading state or calling the cloud")
    .option("-f, --file <path>", "stack file", "stack.yaml")
    .option("--json", "print {valid, errored, error_count, warning_count, diagnostics} on stdout (diagnostics also on stderr)")
    .option("--no-color", "plain text output")
    .option("--strict", "treat lint warnings as errors")
    .action(
      action(async (o: { file: string; json?: boolean; strict?: boolean }) => {
        const { stack, diagnostics } = loadStackFile(o.file, { strict: o.strict === true });
        const valid = stack !== undefined && !hasErrors(diagnostics);
        printDiagnostics(diagnostics);
        if (o.json) {
          const errors = diagnostics.filter((d) => d.severity === "error").length;
          await writeOut(jsonText({ format_version: "1.0", valid, errored: !valid, error_count: errors, warning_count: diagnostics.length - errors, diagnostics }, 2) + "\n");
        } else {
          if (valid) await writeOut(`Success! The stack is valid (${stack!.resources.size} resources, ${stack!.variables.size} variables, ${stack!.outputs.size} outputs).\n`);
        }
        return valid ? EXIT.ok : EXIT.error;
      }),
    );
}
