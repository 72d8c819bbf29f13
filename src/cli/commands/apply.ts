import { type Command, Option } from "commander";
import { UserError } from "../../diagnostics/diagnostic.js";
import { counted } from "../../diagnostics/listed.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { applyMade, type Hooks, type Outcome, planAndApply, refresh } from "../../engine/operations.js";
import { SENSITIVE_TEXT, redactState, showSensitiveValues } from "../../config/redact.js";
import { checkStackName } from "../../engine/saved-plan-checks.js";
import { planKey } from "../../plan/saved-plan.js";
import { readSavedPlan } from "./saved-plan-file.js";
import {
  addStackOptions,
  withExamples,
  action,
  printDiagnostics,
  printLines,
  STACK_FILE_HELP,
  STATE_OPTION_HELP,
  openStackOf,
  stateStoreOf,
  useLiveView,
  writeOut,
  type StackOptions,
  backendOption,
  WORKSPACE_OPTION_HELP,
  type StateCommandOptions,
} from "../common.js";
import { EXIT } from "../exit-codes.js";
import { durationMs } from "../deadline.js";
import { seg } from "../../diagnostics/lines.js";
import { outputLines } from "../render/values.js";
import { refreshLines } from "../render/plan-text.js";
import { addPlanOptions, planRequestOf, reportingFailure, type PlanCliOptions } from "./plan.js";
import { UiStream } from "../ui-stream.js";
import { interruptedExit, planInterrupted } from "../interrupt.js";
import { cliControls } from "../controls.js";
import type { ApplyView } from "../views/view.js";
import { HumanView } from "../views/human-view.js";
import { LiveView } from "../views/live-view.js";
import { JsonStreamView } from "../views/json-view.js";
import type { InputValue } from "../../config/inputs.js";
import type { Plan } from "../../generated/schemas.js";

interface ApplyCliOptions extends PlanCliOptions {
  autoApprove?: boolean;
  destroy?: boolean;
  /** Seconds between apply_progress messages of a running change (--json). */
  progressInterval?: string;
}

/** The JSON UI's lines with --json, a live ink view in a terminal, Terraform-style lines otherwise. */
function applyView(o: ApplyCliOptions, ui: UiStream | undefined): ApplyView {
  if (ui) return new JsonStreamView(ui);
  return useLiveView(o) ? new LiveView({ color: o.color }) : new HumanView({ color: o.color });
}

/** What the view shows along an apply, and who approves (--auto-approve: nobody is asked). */
function hooksOf(view: ApplyView, o: ApplyCliOptions): Hooks {
  return {
    emit: view.onEvent,
    planned: (shown) => view.planned(shown),
    replanned: (shown) => view.replanned(shown),
    ...(o.autoApprove ? {} : { approve: (shown, destroy) => view.approve(shown, destroy) }),
    unchanged: async (shown, destroy) => view.unchanged?.(shown, destroy),
    applying: (plan) => view.applying(plan),
  };
}

/** The exit code of an operation's outcome; the view shows how the apply ended. */
async function ended(outcome: Outcome, view: ApplyView): Promise<number> {
  switch (outcome.kind) {
    case "stopped":
      return planInterrupted(outcome.how);
    case "errored":
      return EXIT.error;
    case "unchanged":
      return EXIT.ok;
    case "cancelled":
      process.stderr.write(`${outcome.plan.options.destroy ? "Destroy" : "Apply"} cancelled: nothing was changed.\n`);
      return EXIT.error;
    case "applied": {
      const { result, counts, destroy, stopped } = outcome;
      await view.applied({ result, counts, destroy, stopped });
      if (result.interrupted) return stopped === "timeout" ? EXIT.error : interruptedExit();
      return result.failed.length ? EXIT.error : EXIT.ok;
    }
  }
}

/**
 * `apply FILE`: the endpoint, the state and the stack come from -f and the environment, as for
 * `plan`; the file only says what was reviewed. After the file's own checks, the operation
 * (../../engine/operations.ts: applyMade) plans again with the saved options and, when the grant
 * changes match, applies the fresh plan: it is built only from trusted inputs, and every field the
 * comparison leaves out (dependencies, protect, variables) comes from them rather than the file.
 */
async function applySavedPlan(planFile: string, o: ApplyCliOptions, view: ApplyView): Promise<number> {
  if (o.target.length || o.replace.length || o.refresh !== "true") {
    throw new UserError({
      severity: "error",
      summary:
        "--target, --replace and --refresh cannot be given with a plan file: " +
        "it applies with the options it was made with",
    });
  }
  const saved = readSavedPlan(planFile, planKey());
  // The inputs the plan was made with, as Terraform's saved plans carry them: only the secret
  // ones are given again (the plan holds none).
  const session = await openStackOf(o, { planInputs: savedInputs(saved, planFile) });
  if (o.file !== undefined) checkStackName(saved, planFile, session.stack.name, o.file);
  try {
    return await ended(
      await applyMade(
        session,
        { plan: saved, label: planFile },
        planRequestOf(o),
        hooksOf(view, o),
        cliControls(view, durationMs(o.lockTimeout)),
      ),
      view,
    );
  } finally {
    await view.close();
  }
}

/** The input values a saved plan records (its `variables`; a secret one there is a placeholder,
 *  and the loader takes none of a secret input from a plan). */
function savedInputs(saved: Plan, file: string): InputValue[] {
  return Object.entries(saved.variables ?? {}).map(([name, value]) => ({
    name,
    value,
    text: false,
    source: { kind: "plan", file },
  }));
}

/** `apply` and `destroy` without a plan file: plan, show, ask, execute. */
async function runApply(o: ApplyCliOptions, destroy: boolean, view: ApplyView): Promise<number> {
  const session = await openStackOf(o);
  try {
    return await ended(
      await planAndApply(
        session,
        planRequestOf({ ...o, destroy }),
        hooksOf(view, o),
        cliControls(view, durationMs(o.lockTimeout)),
      ),
      view,
    );
  } finally {
    await view.close();
  }
}

/** `converge refresh`: the state's resources as the live cloud has them; no cloud write. */
async function runRefresh(o: StackOptions): Promise<number> {
  const session = await openStackOf(o);
  const none = { planned: async () => {}, onEvent: () => {}, flush: () => {}, close: async () => {} };
  const { shown, stopped, written } = await refresh(
    session,
    planRequestOf({ ...o, refresh: "true", target: [], replace: [] }),
    {},
    cliControls(none, durationMs(o.lockTimeout)),
  );
  if (stopped) return planInterrupted(stopped);
  printDiagnostics(shown.diagnostics);
  if (shown.plan.errored) return EXIT.error;
  if (!written) {
    await writeOut("There is no state yet: nothing to refresh.\n");
    return EXIT.ok;
  }
  if (o.json) await writeOut(jsonText({ drift: shown.plan.resource_drift, serial: written.serial }, 2) + "\n");
  else
    await printLines(
      [
        ...refreshLines(shown.plan),
        [],
        [seg(`State refreshed: ${counted(written.resources.length, "resource")} (serial ${written.serial}).`)],
      ],
      o,
    );
  return EXIT.ok;
}

/** The JSON UI cannot ask for approval: refused before any work, as Terraform refuses it. */
function refuseUnapprovedJson(destroy: boolean): never {
  throw new UserError({
    severity: "error",
    summary: `${destroy ? "destroy" : "apply"} --json needs --auto-approve${destroy ? "" : " or a plan file"}`,
    detail:
      `converge cannot ask for approval while it prints JSON. ` +
      (destroy
        ? "Add --auto-approve, or save the plan with `converge plan --destroy --out FILE` and run " +
          "`converge apply FILE --json`."
        : "Add --auto-approve, or save the plan with `converge plan --out FILE`, review it, and run " +
          "`converge apply FILE --json`.") +
      ` Nothing was ${destroy ? "destroyed" : "applied"}.`,
  });
}

function progressIntervalMs(o: ApplyCliOptions): number {
  const s = Number(o.progressInterval ?? "10");
  if (!Number.isFinite(s) || s <= 0)
    throw new UserError({
      severity: "error",
      summary: `--progress-interval takes a number of seconds above 0, got "${o.progressInterval}"`,
    });
  return s * 1000;
}

function applyAction(destroy: boolean) {
  return action(async (planFile: string | undefined, o: ApplyCliOptions) => {
    const ui = o.json ? new UiStream(progressIntervalMs(o)) : undefined;
    ui?.version();
    const view = applyView(o, ui);
    return reportingFailure(o, ui, async () => {
      if (planFile) {
        if (destroy)
          throw new UserError({
            severity: "error",
            summary:
              "destroy does not take a plan file; use `converge plan --destroy --out FILE` and `converge apply FILE`",
          });
        return applySavedPlan(planFile, o, view);
      }
      if (o.json && !o.autoApprove) refuseUnapprovedJson(destroy);
      return runApply(o, destroy, view);
    });
  });
}

// For the tests of apply_progress: not for users (Terraform's interval is 10 seconds).
const progressIntervalOption = () =>
  new Option("--progress-interval <seconds>", "seconds between apply_progress messages of a running change (--json)")
    .default("10")
    .hideHelp();

type OutputOptions = StateCommandOptions & { json?: boolean; raw?: boolean; showSensitive?: boolean };

/** `converge output [name]`: the stack's outputs from the state, secrets hidden unless asked for. */
async function runOutput(name: string | undefined, o: OutputOptions): Promise<number> {
  const read = await (await stateStoreOf(o)).read();
  // Asked for the values: none is hidden; else none is shown, whichever output holds it.
  if (o.showSensitive) showSensitiveValues();
  const state = o.showSensitive ? read : redactState(read);
  const outputs: Record<string, unknown> = { ...(state?.outputs ?? {}) };
  if (!o.showSensitive)
    for (const n of state?.sensitive_outputs ?? []) if (Object.hasOwn(outputs, n)) outputs[n] = SENSITIVE_TEXT;
  if (name !== undefined) {
    if (!Object.hasOwn(outputs, name))
      throw new UserError({
        severity: "error",
        summary: `output "${name}" not found`,
        detail: Object.keys(outputs).length
          ? `Outputs: ${Object.keys(outputs).join(", ")}.`
          : "The state has no outputs; run converge apply first.",
      });
    const v = outputs[name];
    // --raw is for scripts, $(converge output --raw x): the exact value, but not onto a terminal.
    const raw = (s: string) => (process.stdout.isTTY ? terminalText(s) : s);
    await writeOut(
      o.json
        ? jsonText(v) + "\n"
        : typeof v === "string" && o.raw
          ? `${raw(v)}\n`
          : `${terminalText(JSON.stringify(v))}\n`,
    );
    return EXIT.ok;
  }
  if (o.json) await writeOut(jsonText(outputs, 2) + "\n");
  else if (Object.keys(outputs).length) await printLines(outputLines(outputs), { color: false });
  return EXIT.ok;
}

export function registerApply(program: Command): void {
  const apply = program
    .command("apply")
    .argument("[planfile]", "a plan saved with `converge plan --out`")
    .description("Apply the changes (asks for approval unless --auto-approve or a saved plan)");
  addPlanOptions(addStackOptions(apply))
    .option("--auto-approve", "do not ask for approval")
    .addOption(progressIntervalOption())
    .action(applyAction(false));
  withExamples(apply, [
    "converge apply",
    "converge apply --auto-approve --parallelism 4",
    "converge plan --out plan.json && converge apply plan.json",
  ]);

  const destroy = program
    .command("destroy")
    .description("Remove every grant the stack manages (protected resources block it)");
  const destroyAction = applyAction(true);
  addPlanOptions(addStackOptions(destroy))
    .option("--auto-approve", "do not ask for approval")
    .addOption(progressIntervalOption())
    .action((o: ApplyCliOptions) => destroyAction(undefined, o));
  withExamples(destroy, [
    "converge destroy",
    "converge plan --destroy --out destroy.json && converge apply destroy.json",
  ]);

  const refresh = program
    .command("refresh")
    .description("Update the state from the live cloud (writes nothing to the cloud)");
  withExamples(addStackOptions(refresh), ["converge refresh", "converge refresh --json"]).action(
    action((o: StackOptions) => runRefresh(o)),
  );

  program
    .command("output")
    .argument("[name]", "one output")
    .description("Print the stack's outputs from the state")
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .addOption(backendOption())
    .option("--workspace <name>", WORKSPACE_OPTION_HELP)
    .option("--json", "print JSON")
    .option("--raw", "print a string output without quotes")
    .option("--show-sensitive", "print the values of outputs computed from a secret")
    .action(action(runOutput));
}
