import { lstatSync, renameSync, rmSync } from "node:fs";
import type { Command } from "commander";
import { tempPathFor } from "../../fs/atomic-file.js";
import type { Plan } from "../../generated/schemas.js";
import type { PlanRequest } from "../../engine/session.js";
import { actorOf } from "../../state/postgres/history.js";
import { preview } from "../../engine/operations.js";
import { cliControls } from "../controls.js";
import { planKey, savePlan, sealPlan } from "../../plan/saved-plan.js";
import { terraformPlanFailure } from "../../plan/terraform-json.js";
import { UiStream } from "../ui-stream.js";
import { UserError } from "../../diagnostics/diagnostic.js";
import { notRegularError, writablePath, type FileRole } from "../../fs/regular-files.js";
import { jsonText } from "../../diagnostics/terminal-text.js";
import { isCloudError } from "../../cloud/errors.js";
import { ratesOf } from "../rate-option.js";
import {
  addStackOptions,
  withExamples,
  action,
  callTimeoutOf,
  openStackOf,
  parallelismOf,
  stdoutWritten,
  writeOut,
  type StackOptions,
} from "../common.js";
import { EXIT } from "../exit-codes.js";
import { haltForExit, planInterrupted, stopping } from "../interrupt.js";
import type { PlanView } from "../views/view.js";
import { HumanView } from "../views/human-view.js";
import { JsonPlanView, JsonStreamView } from "../views/json-view.js";
import { SarifPlanView } from "../views/sarif-view.js";

export interface PlanCliOptions extends StackOptions {
  out?: string;
  detailedExitcode?: boolean;
  refresh: string;
  target: string[];
  replace: string[];
  /** --approve RULE: owner-approval guardrails the actor (CONVERGE_ACTOR) approves, repeatable */
  approve?: string[];
}

const collect = (v: string, prev: string[]) => [...prev, v];

export function addPlanOptions(cmd: Command): Command {
  return cmd
    .option("--refresh <bool>", "read live policies before diffing (--refresh=false uses the state as is)", "true")
    .option("--target <address>", "limit the plan to this resource and what it depends on (repeatable)", collect, [])
    .option("--replace <address>", "plan to replace this resource even if unchanged (repeatable)", collect, [])
    .option("--approve <rule>", "approve an owner-approval guardrail, as CONVERGE_ACTOR (repeatable)", collect, []);
}

export function bool(text: string, flag: string): boolean {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  throw new UserError({ severity: "error", summary: `${flag} takes true or false, got "${text}"` });
}

/** What the engine is asked to plan, from the command's options. */
export function planRequestOf(o: PlanCliOptions & { destroy?: boolean }): PlanRequest {
  return {
    refresh: bool(o.refresh ?? "true", "--refresh"),
    destroy: o.destroy === true,
    targets: o.target ?? [],
    replace: o.replace ?? [],
    parallelism: parallelismOf(o),
    callTimeoutMs: callTimeoutOf(o),
    rates: ratesOf(o),
    strict: o.strict === true,
    ...(o.approve?.length ? { approval: { actor: actorOf(), rules: o.approve } } : {}),
  };
}

/**
 * Runs `fn`; a user or cloud error is also reported on stdout when stdout carries JSON (so that
 * it always carries one JSON document, or the stream's lines): with --json as a plan that has
 * only diagnostics (schemas/terraform-plan.schema.json#/definitions/TerraformPlanFailure), with
 * a UI stream as its diagnostic messages. The error goes on to `action` (stderr, exit 1).
 */
export async function reportingFailure(
  o: { json?: boolean },
  ui: UiStream | undefined,
  fn: () => Promise<number>,
): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    const diagnostics =
      e instanceof UserError
        ? e.diagnostics
        : isCloudError(e)
          ? [{ severity: "error" as const, summary: e.message }]
          : undefined;
    if (ui && diagnostics) {
      ui.diagnostics(diagnostics);
      ui.flush();
    } else if (o.json && diagnostics) await writeOut(jsonText(terraformPlanFailure(diagnostics), 2) + "\n");
    throw e;
  }
}

/** What `show --format PLANFILE` prints; `plan --format` prints these and sarif. */
export const PLAN_FORMATS: readonly string[] = ["text", "markdown", "html"];

interface PlanCommandOptions extends PlanCliOptions {
  destroy?: boolean;
  view: string;
  format: string;
  jsonStream?: boolean;
}

function checkPlanOptions(o: PlanCommandOptions): void {
  if (!["changes", "access"].includes(o.view))
    throw new UserError({ severity: "error", summary: `--view takes changes or access, got "${o.view}"` });
  if (![...PLAN_FORMATS, "sarif"].includes(o.format)) {
    const summary = `--format takes text, markdown, html or sarif, got "${o.format}"`;
    throw new UserError({ severity: "error", summary });
  }
  if (o.json && o.format !== "text")
    throw new UserError({ severity: "error", summary: `--json cannot be combined with --format ${o.format}` });
  if (o.jsonStream && (o.json || o.view !== "changes" || o.format !== "text")) {
    throw new UserError({
      severity: "error",
      summary: "--json-stream cannot be combined with --json, --view or --format",
      detail:
        "--json-stream prints the plan's progress and changes as JSON lines; " +
        "--json prints the plan as one JSON document.",
    });
  }
}

/** The view `plan` shows its result in. */
function planView(o: PlanCommandOptions, ui: UiStream | undefined): PlanView {
  if (ui) return new JsonStreamView(ui);
  if (o.json) return new JsonPlanView();
  if (o.format === "sarif") return new SarifPlanView();
  const format = o.format === "markdown" || o.format === "html" ? o.format : o.view === "access" ? "access" : "changes";
  return new HumanView({ color: o.color, format, ...(o.out ? { savedTo: o.out } : {}) });
}

const PLAN_FILE: FileRole = {
  what: "plan file",
  detail:
    "`plan --out` saves the plan in a regular file (or where a symlink to one points), replacing it: " +
    "it never replaces anything else. Name another file with --out.",
};

/** The plan saved beside `path` (plan --out's file, symlinks followed: see writablePath) under a
 *  temporary name (an error, such as a plan too large to save, comes before anything is printed);
 *  `commit` puts it in place once the plan's output is all written. Until then, the process's exit
 *  (an interrupt, a closed output) removes it. */
function stagePlan(path: string, shown: string, plan: Plan): { commit: () => void } {
  const staged = tempPathFor(path);
  const drop = () => rmSync(staged, { force: true });
  process.once("exit", drop);
  savePlan(staged, plan);
  return {
    commit() {
      process.off("exit", drop);
      const now = lstatSync(path, { throwIfNoEntry: false });
      // Checked before the plan; whatever was put there meanwhile is not replaced either.
      if (now && !now.isFile()) {
        drop();
        throw notRegularError(PLAN_FILE, shown, now, undefined);
      }
      renameSync(staged, path);
    },
  };
}

/** `converge plan`; `ui` when the plan streams its JSON lines (--json-stream). */
async function runPlan(o: PlanCommandOptions, ui: UiStream | undefined): Promise<number> {
  checkPlanOptions(o);
  // Before the stack's state and the cloud are read: a file --out must not replace is refused first.
  const out = o.out === undefined ? undefined : await writablePath(o.out, PLAN_FILE);
  const session = await openStackOf(o);
  const view = planView(o, ui);
  const { shown, stopped } = await preview(
    session,
    planRequestOf(o),
    { emit: view.onEvent },
    cliControls(view, undefined),
  );
  if (stopped) {
    view.flush();
    return planInterrupted(stopped);
  }
  const { plan } = shown;
  // --out saves, and --json and the html page print, the plan with its seal (digest, and signature with a key).
  const sealed = !plan.errored && (out || o.json || o.format === "html") ? sealPlan(plan, planKey()) : plan;
  const saved = out && !plan.errored ? stagePlan(out, o.out ?? out, sealed) : undefined;
  await view.planned({ ...shown, plan: sealed });
  await view.close();
  // A plan whose output was not all read (its reader gone, a signal meanwhile) is not saved.
  await stdoutWritten();
  if (stopping()) return haltForExit();
  saved?.commit();
  if (plan.errored) return EXIT.error;
  return o.detailedExitcode && plan.applyable ? EXIT.changes : EXIT.ok;
}

export function registerPlan(program: Command): void {
  const cmd = program.command("plan").description("Show the changes that apply would make");
  addStackOptions(cmd, { lock: false });
  withExamples(cmd, [
    "converge plan",
    "converge plan -f teams/data/stack.yaml --out plan.json",
    "converge plan --view access",
    "converge plan --format markdown > plan.md",
    "converge plan --format html > review.html",
    "converge plan --detailed-exitcode   # 0 no changes, 1 error, 2 changes",
    "converge plan --json > plan.json   # Terraform's plan JSON, for conftest, checkov…",
  ]);
  addPlanOptions(cmd)
    .option("--out <file>", "save the plan (as data) for `converge apply FILE`")
    .option("--detailed-exitcode", "exit 0 when there are no changes, 2 when there are, 1 on error")
    .option("--destroy", "plan to destroy every resource of the stack")
    .option("--view <view>", "what to show: changes, or access (who gains or loses which role)", "changes")
    .option(
      "--format <format>",
      "text, markdown (for pull-request comments), html (the access review page) or sarif (guardrail results)",
      "text",
    )
    .option("--json-stream", "stream the plan's progress and changes as JSON lines (Terraform's machine-readable UI)")
    .action(
      // Everything plan opened is closed and awaited (the cloud, an embedded world's file, the
      // state store; it takes no lock): no need to wait for V8's background work at exit.
      action(
        (o: PlanCommandOptions) => {
          const ui = o.jsonStream ? new UiStream() : undefined;
          ui?.version();
          return reportingFailure(o, ui, () => runPlan(o, ui));
        },
        { exitWhenDone: true },
      ),
    );
}
