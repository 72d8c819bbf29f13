import { writeFileSync, renameSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { openCloud } from "../../engine/cloud.js";
import type { EngineEvent } from "../../engine/events.js";
import { plan } from "../../plan/planner.js";
import { planKey, sealPlan } from "../../plan/saved-plan.js";
import type { Plan } from "../../generated/schemas.js";
import { terraformPlanFailure, toTerraformPlanJson } from "../../plan/terraform-json.js";
import { UiStream } from "../ui-stream.js";
import { type Diagnostic, UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import { isCloudError } from "../../cloud/errors.js";
import { isLintDiagnostic } from "../../config/lint.js";
import { addStackOptions, withExamples, action, batchedStdout, callTimeoutOf, EXIT, loadOrExit, parallelismOf, printDiagnostics, printLines, stateDirOf, writeOut, type Loaded, type StackOptions } from "../common.js";
import { planLines } from "../render/plan-text.js";
import { accessLines } from "../render/access-text.js";
import { planMarkdown } from "../render/markdown.js";
import { type Line, seg } from "../render/lines.js";
import { RetryTally, retryText } from "../render/retry-text.js";
import { planInterrupted, planning } from "../interrupt.js";

export interface PlanCliOptions extends StackOptions {
  out?: string;
  detailedExitcode?: boolean;
  refresh: string;
  target: string[];
  replace: string[];
}

const collect = (v: string, prev: string[]) => [...prev, v];

export function addPlanOptions(cmd: Command): Command {
  return cmd
    .option("--refresh <bool>", "read live policies before diffing (--refresh=false uses the state as is)", "true")
    .option("--target <address>", "limit the plan to this resource and what it depends on (repeatable)", collect, [])
    .option("--replace <address>", "plan to replace this resource even if unchanged (repeatable)", collect, []);
}

/** Lint warnings among diagnostics (counted in the access summary). */
export function lintWarningCount(diags: readonly Diagnostic[]): number {
  return diags.filter((d) => d.severity === "warning" && isLintDiagnostic(d)).length;
}

export function bool(text: string, flag: string): boolean {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  throw new UserError({ severity: "error", summary: `${flag} takes true or false, got "${text}"` });
}

/** Progress lines printed while planning (human mode): data source reads, retries, and a refresh
 *  summary. With --json, nothing (`plan --json` prints one document), or with `ui` (the streamed
 *  JSON of apply and `plan --json-stream`) every event as a message of it. Every mode counts the
 *  retries. */
export function progressPrinter(o: { json?: boolean }, ui?: UiStream): { onEvent: (e: EngineEvent) => void; lines: () => Line[]; retries: RetryTally } {
  let refreshed = 0;
  const retries = new RetryTally();
  const onEvent = (e: EngineEvent) => {
    if (ui) return ui.onEvent(e);
    if (o.json) return;
    if (e.type === "read" && e.phase === "start") process.stdout.write(`${terminalText(e.address)}: Reading...\n`);
    if (e.type === "read" && e.phase === "done") process.stdout.write(terminalText(`${e.address}: Read complete after ${e.ms}ms [name=${e.object}]`) + "\n");
    if (e.type === "refresh" && e.phase === "done") refreshed++;
    if (e.type === "retry") process.stdout.write(retryText(e) + "\n");
  };
  return {
    onEvent: (e) => {
      if (e.type === "retry") retries.add(e);
      onEvent(e);
    },
    retries,
    lines: () => {
      const summary: Line[] = [...(refreshed ? [[seg(`Refreshed ${refreshed} IAM ${refreshed === 1 ? "policy" : "policies"}.`, "dim")]] : []), ...retries.lines()];
      return summary.length ? [...summary, []] : [];
    },
  };
}

/** Reads the state, opens the cloud and plans (sending no read once `signal` aborts). The caller owns `close`. */
export async function planStack(loaded: Loaded, o: PlanCliOptions & { destroy?: boolean }, onEvent: (e: EngineEvent) => void, signal?: AbortSignal) {
  const callTimeoutMs = callTimeoutOf(o);
  const prior = await loaded.store.read();
  const cloud = await openCloud(loaded.stack.provider, { stateDir: stateDirOf(loaded.statePath), stackName: loaded.stack.name, emit: onEvent, callTimeoutMs });
  try {
    const result = await plan(loaded.stack, prior, cloud.port, {
      refresh: bool(o.refresh ?? "true", "--refresh"),
      destroy: o.destroy === true,
      targets: o.target ?? [],
      replace: o.replace ?? [],
      parallelism: parallelismOf(o),
      strict: o.strict === true,
      target: cloud.target,
      ...(signal ? { signal } : {}),
    }, onEvent);
    // The plan records every warning found for it, those of loading included: `show PLANFILE`
    // renders it (the access summary counts lint warnings) from the plan alone.
    result.plan.diagnostics = [...loaded.lint, ...result.plan.diagnostics];
    return { result, prior, cloud };
  } catch (e) {
    await cloud.close();
    throw e;
  }
}

export function savePlan(file: string, p: Plan): void {
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(p, null, 2) + "\n", { mode: 0o600 });
  renameSync(tmp, path);
}

/**
 * Runs `fn`; a user or cloud error is also reported on stdout when stdout carries JSON (so that
 * it always carries one JSON document, or the stream's lines): with --json as a plan that has
 * only diagnostics (schemas/terraform-plan.schema.json#/definitions/TerraformPlanFailure), with
 * a UI stream as its diagnostic messages. The error goes on to `action` (stderr, exit 1).
 */
export async function reportingFailure(o: { json?: boolean }, ui: UiStream | undefined, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    const diagnostics = e instanceof UserError ? e.diagnostics : isCloudError(e) ? [{ severity: "error" as const, summary: e.message }] : undefined;
    if (ui && diagnostics) {
      ui.diagnostics(diagnostics);
      ui.flush();
    } else if (o.json && diagnostics) await writeOut(jsonText(terraformPlanFailure(diagnostics), 2) + "\n");
    throw e;
  }
}

interface PlanCommandOptions extends PlanCliOptions {
  destroy?: boolean;
  view: string;
  format: string;
  jsonStream?: boolean;
}

function checkPlanOptions(o: PlanCommandOptions): void {
  if (!["changes", "access"].includes(o.view)) throw new UserError({ severity: "error", summary: `--view takes changes or access, got "${o.view}"` });
  if (!["text", "markdown"].includes(o.format)) throw new UserError({ severity: "error", summary: `--format takes text or markdown, got "${o.format}"` });
  if (o.jsonStream && (o.json || o.view !== "changes" || o.format !== "text")) {
    throw new UserError({ severity: "error", summary: "--json-stream cannot be combined with --json, --view or --format", detail: "--json-stream prints the plan's progress and changes as JSON lines; --json prints the plan as one JSON document." });
  }
}

/** `converge plan`; `ui` when the plan streams its JSON lines (--json-stream). */
async function runPlan(o: PlanCommandOptions, ui: UiStream | undefined): Promise<number> {
  checkPlanOptions(o);
  const loaded = loadOrExit(o);
  const progress = progressPrinter({ json: o.json === true || o.format === "markdown" }, ui);
  const { value: { result, cloud }, interrupted } = await planning((signal) => planStack(loaded, o, progress.onEvent, signal));
  await cloud.close();
  if (interrupted) {
    ui?.flush();
    return planInterrupted(interrupted);
  }
  printDiagnostics(result.diagnostics);
  ui?.diagnostics(result.plan.diagnostics);
  if (result.plan.errored) {
    if (o.json) await writeOut(jsonText(toTerraformPlanJson(result.plan), 2) + "\n");
    ui?.flush();
    return EXIT.error;
  }
  // --out saves, and --json prints, the plan with its seal (digest, and signature with a key).
  const sealed = o.out || o.json ? sealPlan(result.plan, planKey()) : result.plan;
  if (o.out) savePlan(o.out, sealed);
  if (ui) {
    ui.plan(result.plan, progress.retries.counts());
    ui.flush();
  } else if (o.json) await writeOut(jsonText(toTerraformPlanJson(sealed), 2) + "\n");
  else if (o.format === "markdown") await writeOut(planMarkdown(result.plan, result.plan.diagnostics.filter(isLintDiagnostic)));
  else if (o.view === "access") await printLines(accessLines(result.plan.access_changes), o);
  else {
    const lines = [...progress.lines(), ...planLines(result.plan, { lintWarnings: lintWarningCount(result.plan.diagnostics) })];
    if (o.out) lines.push([], [seg(`Saved the plan to: ${o.out}`)], [seg(`To perform exactly these actions, run: converge apply ${o.out}`)]);
    await printLines(lines, o);
  }
  return o.detailedExitcode && result.plan.applyable ? EXIT.changes : EXIT.ok;
}

export function registerPlan(program: Command): void {
  const cmd = program.command("plan").description("Show the changes that apply would make");
  addStackOptions(cmd, { lock: false });
  withExamples(cmd, ["converge plan", "converge plan -f teams/data/stack.yaml --out plan.json", "converge plan --view access", "converge plan --format markdown > plan.md", "converge plan --detailed-exitcode   # 0 no changes, 1 error, 2 changes", "converge plan --json > plan.json   # Terraform's plan JSON, for conftest, checkov…"]);
  addPlanOptions(cmd)
    .option("--out <file>", "save the plan (as data) for `converge apply FILE`")
    .option("--detailed-exitcode", "exit 0 when there are no changes, 2 when there are, 1 on error")
    .option("--destroy", "plan to destroy every resource of the stack")
    .option("--view <view>", "what to show: changes, or access (who gains or loses which role)", "changes")
    .option("--format <format>", "text, or markdown (for pull-request comments)", "text")
    .option("--json-stream", "stream the plan's progress and changes as JSON lines (Terraform's machine-readable UI)")
    .action(
      action((o: PlanCommandOptions) => {
        const ui = o.jsonStream ? new UiStream() : undefined;
        ui?.version();
        return reportingFailure(o, ui, () => runPlan(o, ui));
      }),
    );
}
