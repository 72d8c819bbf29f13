// The human view: plain lines (coloured in a colour terminal). While planning, a line per data
// source read and per retry; then the plan as text, as the access view or as Markdown; while
// applying, a Terraform-style line when a change starts, finishes, fails or is skipped; then the
// summary. ./live-view.ts redraws the apply's progress instead.
import { UserError } from "../../diagnostics/diagnostic.js";
import { terminalText } from "../../diagnostics/terminal-text.js";
import type { EngineEvent } from "../../contracts/events.js";
import type { ShownPlan } from "../../engine/operations.js";
import type { Plan, State } from "../../generated/schemas.js";
import { batchedStdout, printDiagnostics, printLines, writeOut } from "../common.js";
import { stoppedWords } from "../interrupt.js";
import { accessSummaryLines } from "../render/access-summary.js";
import { accessLines } from "../render/access-text.js";
import { guardrailLines } from "../render/guardrails.js";
import { lintOf, lintWarningCount } from "../render/lint.js";
import { type Line, seg, toPlain } from "../../diagnostics/lines.js";
import { planMarkdown } from "../render/markdown.js";
import { planHtml } from "./html/page.js";
import { planLineStream } from "../render/plan-text.js";
import { targetLines } from "../render/plan-summary.js";
import { outputLines } from "../render/values.js";
import { policyDiffLines } from "../render/policy-diff.js";
import { RetryTally, retryText } from "../render/retry-text.js";
import { verbs } from "../render/verbs.js";
import type { ApplyReport, ApplyView } from "./view.js";
import { listed } from "../../diagnostics/listed.js";
import { pushAll } from "../../base/arrays.js";
import { redactText, SENSITIVE_TEXT } from "../../config/redact.js";
import { ENV_PREFIX } from "../../config/inputs.js";

export interface HumanViewOptions {
  color?: boolean;
  /** How the plan is shown: its changes (default), who gains or loses which role, or Markdown. */
  format?: "changes" | "access" | "markdown" | "html";
  /** Where the plan was saved (--out), for the closing lines. */
  savedTo?: string;
}

export class HumanView implements ApplyView {
  protected retries = new RetryTally();
  private refreshed = 0;
  private phase: "plan" | "apply" = "plan";
  private readonly out = batchedStdout();

  constructor(protected readonly o: HumanViewOptions = {}) {}

  readonly onEvent = (e: EngineEvent): void => {
    if (e.type === "retry") this.retries.add(e);
    if (this.phase === "apply") this.applyEvent(e);
    else this.planEvent(e);
  };

  /** Progress while planning (nothing for Markdown, which goes whole into a comment). */
  private planEvent(e: EngineEvent): void {
    if (e.type === "refresh" && e.phase === "done") this.refreshed++;
    if (this.o.format === "markdown" || this.o.format === "html") return;
    if (e.type === "read" && e.phase === "start")
      process.stdout.write(redactText(`${terminalText(e.address)}: Reading...\n`));
    if (e.type === "read" && e.phase === "done")
      process.stdout.write(
        redactText(terminalText(`${e.address}: Read complete after ${e.ms}ms [name=${e.object}]`)) + "\n",
      );
    if (e.type === "retry") process.stdout.write(redactText(retryText(e)) + "\n");
  }

  /** Changes reported not started (interrupted): the first NOT_STARTED_SHOWN are listed. */
  private notStarted = 0;

  /** Progress while applying; a failure carries the server's message, escaped. */
  protected applyEvent(e: EngineEvent): void {
    if (e.type === "step" && e.phase === "interrupted" && ++this.notStarted > NOT_STARTED_SHOWN) return;
    const text = progressLine(e);
    if (text !== undefined) this.out.line(terminalText(text));
  }

  async planned(shown: ShownPlan): Promise<void> {
    const { plan } = shown;
    printDiagnostics(shown.diagnostics);
    // Where the calls went comes first, in a failed plan too (an emulator the environment named
    // instead of the stack's endpoint explains many failures).
    const whole = this.o.format === "markdown" || this.o.format === "html";
    if (plan.errored) return whole ? undefined : printLines(targetLines(plan), this.o);
    if (this.o.format === "markdown") return writeOut(planMarkdown(plan, lintOf(plan.diagnostics)));
    if (this.o.format === "html") return writeOut(planHtml(plan, lintOf(plan.diagnostics)));
    if (this.o.format === "access") {
      const access = accessLines(plan.access_changes);
      return printLines([...targetLines(plan), ...access, ...guardrailLines(plan.guardrails)], this.o);
    }
    await printLines(this.planText(plan), this.o);
  }

  /** The plan's lines as they are made (a large plan is never all in memory as lines). */
  private *planText(plan: Plan): Generator<Line, void, undefined> {
    yield* targetLines(plan);
    yield* this.planProgressLines();
    yield* planLineStream(plan, { lintWarnings: lintWarningCount(plan.diagnostics), target: false });
    if (this.o.savedTo) yield* savedHint(plan, this.o.savedTo);
  }

  async replanned(shown: ShownPlan): Promise<void> {
    printDiagnostics(shown.diagnostics);
  }

  /** The refresh and retry summary above the plan. */
  private planProgressLines(): Line[] {
    const n = this.refreshed;
    const summary: Line[] = [
      ...(n ? [[seg(`Refreshed ${n} IAM ${n === 1 ? "policy" : "policies"}.`, "dim")]] : []),
      ...this.retries.lines(),
    ];
    return summary.length ? [...summary, []] : [];
  }

  /** The access summary stands directly above "Enter a value:"; answering 'details' shows every
   *  policy the apply writes, before and after. */
  async approve(shown: ShownPlan, destroy: boolean): Promise<boolean> {
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      throw new UserError({
        severity: "error",
        summary: `no terminal to ask for approval, so nothing was ${destroy ? "destroyed" : "applied"}`,
        detail:
          "Review the plan above and run again with --auto-approve, or save it with " +
          "`converge plan --out FILE` and run `converge apply FILE`.",
      });
    }
    const { askApproval } = await import("./approval.js");
    const { plan } = shown;
    const question = destroy ? "Do you really want to destroy all resources?" : "Do you want to perform these actions?";
    for (;;) {
      const a = await askApproval(question, accessSummaryLines(plan, lintWarningCount(plan.diagnostics)));
      if (a === "yes") return true;
      if (a === "no") return false;
      await printLines(policyDiffLines(shown.policies(), plan.access_changes?.lookalikes), this.o);
    }
  }

  applying(_plan: Plan): void {
    this.phase = "apply";
    this.retries = new RetryTally();
  }

  async applied(report: ApplyReport): Promise<void> {
    this.flush();
    const { result, counts: c, destroy, stopped } = report;
    if (result.failed.length) printDiagnostics(result.failed.map((f) => f.diagnostic));
    const before = `${c.added} added, ${c.changed} changed, ${c.destroyed} destroyed`;
    if (result.interrupted) {
      const unlisted = this.notStarted - NOT_STARTED_SHOWN;
      if (unlisted > 0) process.stdout.write(`… and ${unlisted} more not started (interrupted).\n`);
      process.stderr.write(
        `${stoppedWords(stopped, "Apply")}: ${before} before the interrupt; ` +
          `${result.skipped.length} not started. State saved.\n`,
      );
      return;
    }
    if (result.failed.length) {
      const lines: Line[] = [
        [],
        [
          seg("Apply failed.", "error"),
          seg(
            ` ${result.failed.length} failed: ${listed(
              result.failed.map((f) => f.address),
              SKIPPED_NAMED,
            )}.`,
          ),
        ],
      ];
      if (result.skipped.length)
        lines.push([seg(`Skipped because a change they depend on failed: ${listed(result.skipped, SKIPPED_NAMED)}.`)]);
      lines.push([seg(`Applied before the failure: ${before}. State saved; fix the problem and apply again.`)]);
      pushAll(lines, this.retries.lines());
      process.stderr.write(redactText(toPlain(lines)));
      return;
    }
    const imported = c.imported ? `${c.imported} imported, ` : "";
    const head = destroy
      ? `Destroy complete! Resources: ${c.destroyed} destroyed.`
      : `Apply complete! Resources: ${imported}${before}.`;
    await printLines(
      [[], [seg(head, "add")], ...this.retries.lines(), ...(destroy ? [] : outputsLines(result.state))],
      this.o,
    );
  }

  flush(): void {
    this.out.flush();
  }

  async close(): Promise<void> {
    this.flush();
  }
}

/** An interrupted apply lists this many of the changes it did not start, then counts the rest
 *  (one of 100,000 resources printed 11,907 lines). */
const NOT_STARTED_SHOWN = 10;
/** Where the plan was saved and what `apply FILE` needs: the plan carries the inputs it was made
 *  with, but not the secret ones (their values there are placeholders). */
function savedHint(plan: Plan, file: string): Line[] {
  const lines: Line[] = [
    [],
    [seg(`Saved the plan to: ${file}`)],
    [seg(`To perform exactly these actions, run: converge apply ${file}`)],
  ];
  const stackVariables = new Set((plan.configuration?.variables ?? []).map((v) => v.name));
  const secret = Object.entries(plan.variables ?? {})
    .filter(([k, v]) => !stackVariables.has(k) && JSON.stringify(v).includes(SENSITIVE_TEXT))
    .map(([k]) => k);
  if (secret.length) {
    const vars = secret.map((k) => `--var ${k}=… (or ${ENV_PREFIX}${k})`).join(", ");
    lines.push([
      seg(
        `It takes the other inputs from the plan; give the secret ` +
          `${secret.length === 1 ? "one" : "ones"} again: ${vars}.`,
      ),
    ]);
  }
  return lines;
}

/** The resources skipped after a failure are named up to this many, then counted. */
const SKIPPED_NAMED = 20;

/** Terraform-style progress: a line when a resource starts, finishes, fails or is skipped. */
function progressLine(e: EngineEvent): string | undefined {
  if (e.type === "retry") return retryText(e);
  if (e.type !== "step" || e.action === "no-op") return undefined;
  const [doing, done] = verbs(e.action);
  if (e.phase === "start") return `${e.address}: ${doing}...`;
  if (e.phase === "done") return `${e.address}: ${done} after ${((e.ms ?? 0) / 1000).toFixed(1)}s`;
  if (e.phase === "skipped") return `${e.address}: Skipped (a change it depends on failed)`;
  if (e.phase === "interrupted") return `${e.address}: Not started (interrupted)`;
  return `${e.address}: Failed: ${e.error?.detail ?? e.error?.summary ?? "error"}`;
}

function outputsLines(state: State): Line[] {
  if (!Object.keys(state.outputs).length) return [];
  return [[], [seg("Outputs:", "bold")], [], ...outputLines(state.outputs)];
}
