// `converge show [PLANFILE]`: a saved plan rendered exactly as `plan` rendered it (text, --json,
// --view access, --format markdown or html), or, with no file, the state: its resources and outputs with
// their values laid out as the plan lays them out. Terraform users run `plan -out` in CI and
// review the artifact later; this is that workflow. Reads only: no lock, no cloud call.
import { redactState } from "../../config/redact.js";
import type { Command } from "commander";
import { UserError } from "../../diagnostics/diagnostic.js";
import type { Plan, State } from "../../generated/schemas.js";
import { planKey } from "../../plan/saved-plan.js";
import { toTerraformPlanJson } from "../../plan/terraform-json.js";
import type { BackendType } from "../../state/factory.js";
import {
  action,
  backendOption,
  printLines,
  STACK_FILE_HELP,
  STATE_OPTION_HELP,
  stateStoreOf,
  WORKSPACE_OPTION_HELP,
  writeJsonOut,
  writeOut,
} from "../common.js";
import { EXIT } from "../exit-codes.js";
import { serialOf, stateAt } from "./state-team.js";
import { accessLines } from "../render/access-text.js";
import { guardrailLines } from "../render/guardrails.js";
import { type Line, seg } from "../../diagnostics/lines.js";
import { planMarkdown } from "../render/markdown.js";
import { planHtml } from "../views/html/page.js";
import { PLAN_FORMATS } from "./plan.js";
import { planLineStream } from "../render/plan-text.js";
import { outputLines, resourceLines } from "../render/values.js";
import { lintOf, lintWarningCount } from "../render/lint.js";
import { readSavedPlan } from "./saved-plan-file.js";
import { pushAll } from "../../base/arrays.js";

interface ShowOptions {
  file?: string;
  state?: string;
  backend?: BackendType;
  workspace?: string;
  serial?: string;
  json?: boolean;
  color: boolean;
  view: string;
  format: string;
}

/** The plan's own rendering: the same functions `plan` calls, on the saved data alone. */
async function showPlan(plan: Plan, o: ShowOptions): Promise<void> {
  if (o.json) return writeJsonOut(toTerraformPlanJson(plan));
  const lint = lintOf(plan.diagnostics);
  if (o.format === "markdown") return writeOut(planMarkdown(plan, lint));
  if (o.format === "html") return writeOut(planHtml(plan, lint));
  if (o.view === "access") {
    return printLines([...accessLines(plan.access_changes), ...guardrailLines(plan.guardrails)], o);
  }
  return printLines(planLineStream(plan, { lintWarnings: lintWarningCount(plan.diagnostics) }), o);
}

export function stateLines(state: State): Line[] {
  const lines: Line[] = [];
  for (const r of state.resources) {
    pushAll(lines, resourceLines(r.address, r.type, r.outputs));
    lines.push([]);
  }
  if (Object.keys(state.outputs).length) {
    lines.push([seg("Outputs:", "bold")], []);
    pushAll(lines, outputLines(state.outputs));
  }
  return lines.length ? lines : [[seg("The state is empty: no resources, no outputs.")]];
}

async function showState(o: ShowOptions): Promise<void> {
  // --serial: a version from the history (backends that keep one).
  const store = await stateStoreOf(o);
  const state = redactState(o.serial !== undefined ? await stateAt(store, serialOf(o.serial)) : await store.read());
  if (o.json) return writeJsonOut(state ?? null);
  if (!state) return writeOut("No state yet: run converge apply first.\n");
  return printLines(stateLines(state), o);
}

export function registerShow(program: Command): void {
  program
    .command("show")
    .argument("[planfile]", "a plan saved with `converge plan --out` (default: show the state)")
    .description("Show a saved plan as `plan` showed it, or the state")
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .addOption(backendOption())
    .option("--workspace <name>", WORKSPACE_OPTION_HELP)
    .option("--serial <n>", "show this version of the state from its history (converge state history lists them)")
    .option("--json", "print JSON (a plan: Terraform's plan JSON, as plan --json; or the state)")
    .option("--view <view>", "for a plan: changes or access", "changes")
    .option("--format <format>", "for a plan: text, markdown or html", "text")
    .option("--no-color", "plain text output, no colours")
    .addHelpText(
      "after",
      "\nExamples:\n  converge plan --out plan.json && converge show plan.json\n  converge show --json plan.json\n" +
        "  converge show                     # the state of ./stack.yaml\n" +
        "  converge show --serial 3          # version 3 of it, from the history",
    )
    .action(
      action(async (planFile: string | undefined, o: ShowOptions) => {
        if (!["changes", "access"].includes(o.view))
          throw new UserError({ severity: "error", summary: `--view takes changes or access, got "${o.view}"` });
        if (!PLAN_FORMATS.includes(o.format)) {
          const summary = `--format takes text, markdown or html, got "${o.format}"`;
          throw new UserError({ severity: "error", summary });
        }
        if (planFile && o.serial !== undefined)
          throw new UserError({
            severity: "error",
            summary: "--serial shows a version of the state, not a saved plan",
          });
        if (planFile) await showPlan(readSavedPlan(planFile, planKey()), o);
        else await showState(o);
        return EXIT.ok;
      }),
    );
}
