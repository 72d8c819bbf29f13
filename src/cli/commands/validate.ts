import type { Command } from "commander";
import { loadAnyStackFile } from "../../sdk/load-any.js";
import { type Diagnostic, hasErrors } from "../../diagnostics/diagnostic.js";
import type { StackModel } from "../../config/model.js";
import { loadRuleSet, policyFilesOf } from "../../guardrails/rules.js";
import { counted } from "../../diagnostics/listed.js";
import { jsonText } from "../../diagnostics/terminal-text.js";
import { fileTexts, terraformDiagnostic } from "../../diagnostics/terraform-diagnostic.js";
import type { ValidateOutput } from "../../generated/schemas.js";
import { action, addInputOptions, inputsOf, printDiagnostics, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";

/** The problems of the rules of `stack` (its policies: section) and of the rules files. */
function checkRules(stack: StackModel, given: string[]): Diagnostic[] {
  const diags: Diagnostic[] = [];
  loadRuleSet(stack, policyFilesOf(process.env, given), diags);
  return diags;
}

const collect = (v: string, prev: string[]): string[] => prev.concat([v]);

export function registerValidate(program: Command): void {
  const cmd = program
    .command("validate")
    .description("Check the stack without reading state or calling the cloud")
    .option("-f, --file <path>", "stack file", "stack.yaml")
    .option("--json", "print Terraform's validate JSON on stdout (diagnostics also on stderr)")
    .option("--no-color", "plain text output")
    .option("--strict", "treat lint warnings as errors")
    .option("--policy <file>", "guardrail rules to check too (repeatable; also CONVERGE_POLICY)", collect, []);
  // validate reads files and prints; nothing of it runs on (a program stack's too has finished).
  type Options = { file: string; json?: boolean; strict?: boolean; var?: string[]; varFile?: string[] };
  const run = action(
    async (o: Options & { policy?: string[] }) => {
      // As `terraform validate`: an input without a value is unknown here, not an error.
      const how = { strict: o.strict === true, inputs: inputsOf(o), inputsOptional: true, offline: "validate" };
      const loaded = await loadAnyStackFile(o.file, how);
      const { stack } = loaded;
      // The guardrail rules are checked as every command that plans checks them.
      const diagnostics = stack ? loaded.diagnostics.concat(checkRules(stack, o.policy ?? [])) : loaded.diagnostics;
      const valid = stack !== undefined && !hasErrors(diagnostics);
      printDiagnostics(diagnostics);
      if (o.json) {
        // Terraform's validate JSON (schemas/validate.schema.json), with converge's `errored`.
        const errors = diagnostics.filter((d) => d.severity === "error").length;
        const texts = fileTexts();
        const out: ValidateOutput = {
          format_version: "1.0",
          valid,
          error_count: errors,
          warning_count: diagnostics.length - errors,
          diagnostics: diagnostics.map((d) => terraformDiagnostic(d, texts)),
          errored: !valid,
        };
        await writeOut(jsonText(out, 2) + "\n");
      } else {
        if (valid)
          await writeOut(
            `Success! The stack is valid (${counted(stack!.resources.size, "resource")}, ` +
              `${counted(stack!.variables.size, "variable")}, ${counted(stack!.outputs.size, "output")}).\n`,
          );
      }
      return valid ? EXIT.ok : EXIT.error;
    },
    { exitWhenDone: true },
  );
  addInputOptions(cmd).action(run);
}
