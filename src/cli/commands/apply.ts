import { type Command, Option } from "commander";
import { apply, type ApplyResult } from "../../apply/executor.js";
import { UserError } from "../../diagnostics/diagnostic.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import type { OpenCloud } from "../../engine/cloud.js";
import type { EngineEvent } from "../../engine/events.js";
import type { Plan, Policy, State } from "../../generated/schemas.js";
import { planKey } from "../../plan/saved-plan.js";
import { checkNotStale, checkSameChanges, checkStackName, readSavedPlan } from "./saved-plan-file.js";
import { localStateStore, newState, type StateStore, versionOf } from "../../state/index.js";
import { addStackOptions, withExamples, action, EXIT, loadOrExit, parallelismOf, printDiagnostics, printLines, batchedStdout, STACK_FILE_HELP, STATE_OPTION_HELP, stateStoreOf, underLock, useLiveView, writeOut, type StackOptions } from "../common.js";
import { type Line, seg, toPlain } from "../render/lines.js";
import { planLines, refreshLines } from "../render/plan-text.js";
import { accessSummaryLines } from "../render/access-summary.js";
import { policyDiffLines } from "../render/policy-diff.js";
import { plannedPolicies } from "../../plan/access.js";
import { addPlanOptions, lintWarningCount, planStack, progressPrinter, reportingFailure, type PlanCliOptions } from "./plan.js";
import { UiStream } from "../ui-stream.js";
import { verbs } from "../render/verbs.js";
import { RetryTally, retryText } from "../render/retry-text.js";
import { APPLYING, catchInterrupts, planInterrupted, planning, stoppedBy } from "../interrupt.js";
import { commandTimeout } from "../deadline.js";

interface ApplyCliOptions extends PlanCliOptions {
  autoApprove?: boolean;
  destroy?: boolean;
  /** Seconds between apply_progress messages of a running change (--json). */
  progressInterval?: string;
}

interface ProgressSink {
  onEvent: (e: EngineEvent) => void;
  /** Writes what is buffered; the sink stays usable. */
  flush: () => void;
  stop: () => Promise<void>;
  retries: RetryTally;
}

/** Streams progress: the JSON UI's lines with --json, a live ink view in a terminal,
 *  Terraform-style lines otherwise. Every mode counts retries for the summary. */
function progressSink(o: { json?: boolean; color?: boolean }, ui: UiStream | undefined): ProgressSink {
  const retries = new RetryTally();
  const count = (e: EngineEvent) => {
    if (e.type === "retry") retries.add(e);
  };
  if (ui) {
    return {
      onEvent: (e) => {
        count(e);
        ui.onEvent(e);
      },
      flush: () => ui.flush(),
      stop: async () => ui.flush(),
      retries,
    };
  }
  if (useLiveView(o)) {
    let view: { stop: () => Promise<void> } | undefined;
    let model: import("../views/apply-progress.js").ProgressModel | undefined;
    const pending: EngineEvent[] = [];
    const ready = import("../views/apply-progress.js").then((m) => {
      model = new m.ProgressModel();
      for (const e of pending) model.on(e);
      view = m.startProgressView(model);
    });
    return {
      onEvent: (e) => {
        count(e);
        if (model) model.on(e);
        else pending.push(e);
      },
      flush: () => {},
      stop: async () => {
        await ready;
        await view?.stop();
      },
      retries,
    };
  }
  const out = batchedStdout();
  const line = (e: EngineEvent) => {
    const text = progressLine(e);
    return text === undefined ? undefined : terminalText(text); // a failure carries the server's message
  };
  return {
    onEvent: (e) => {
      count(e);
      const text = line(e);
      if (text !== undefined) out.line(text);
    },
    flush: out.flush,
    stop: async () => out.flush(),
    retries,
  };
}

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
  const entries = Object.entries(state.outputs);
  if (!entries.length) return [];
  const pad = Math.max(...entries.map(([k]) => k.length));
  return [[], [seg("Outputs:", "bold")], [], ...entries.map(([k, v]) => [seg(`${k.padEnd(pad)} = ${JSON.stringify(v)}`)])];
}

/** Executes a plan with Ctrl-C handling; returns the exit code. */
async function execute(plan: Plan, ctx: { store: StateStore; prior: State | undefined; cloud: OpenCloud; live?: Map<string, Policy>; o: ApplyCliOptions; destroy: boolean; ui: UiStream | undefined }): Promise<number> {
  const { o, ui } = ctx;
  const sink = progressSink(o, ui);
  const interrupts = catchInterrupts(APPLYING);
  interrupts.beforeExit(sink.flush);
  ctx.cloud.route(sink.onEvent);
  let result: ApplyResult;
  // Each save expects the version the previous one wrote (compare-and-swap): another writer's
  // state is never overwritten.
  let expect = versionOf(ctx.prior);
  const save = async (s: State) => {
    const written = await ctx.store.write(s, expect);
    expect = versionOf(written);
    return written;
  };
  try {
    result = await apply(plan, {
      cloud: ctx.cloud.port,
      state: ctx.prior ?? newState(plan.stack.name),
      save,
      parallelism: parallelismOf(o),
      emit: sink.onEvent,
      signal: interrupts.signal,
      ...(ctx.live ? { live: ctx.live } : {}),
    });
  } finally {
    await sink.stop();
    interrupts.dispose();
  }
  const c = result.counts;
  if (result.failed.length) printDiagnostics(result.failed.map((f) => f.diagnostic));
  if (ui) {
    ui.diagnostics(result.failed.map((f) => f.diagnostic));
    ui.applied(result, ctx.destroy, sink.retries.counts());
    ui.flush();
  }
  if (result.interrupted) {
    const timedOut = stoppedBy(interrupts.signal) === "timeout";
    const what = timedOut ? `Apply stopped by --timeout ${commandTimeout()?.text ?? ""}` : "Apply interrupted";
    if (!o.json) process.stderr.write(`${what}: ${c.added} added, ${c.changed} changed, ${c.destroyed} destroyed before the interrupt; ${result.skipped.length} not started. State saved.\n`);
    return timedOut ? EXIT.error : EXIT.interrupted;
  }
  if (result.failed.length) {
    if (!o.json) {
      const lines: Line[] = [[], [seg("Apply failed.", "error"), seg(` ${result.failed.length} failed: ${result.failed.map((f) => f.address).join(", ")}.`)]];
      if (result.skipped.length) lines.push([seg(`Skipped because a change they depend on failed: ${result.skipped.join(", ")}.`)]);
      lines.push([seg(`Applied before the failure: ${c.added} added, ${c.changed} changed, ${c.destroyed} destroyed. State saved; fix the problem and apply again.`)]);
      lines.push(...sink.retries.lines());
      process.stderr.write(toPlain(lines));
    }
    return EXIT.error;
  }
  if (!o.json) {
    const imported = c.imported ? `${c.imported} imported, ` : "";
    const head = ctx.destroy ? `Destroy complete! Resources: ${c.destroyed} destroyed.` : `Apply complete! Resources: ${imported}${c.added} added, ${c.changed} changed, ${c.destroyed} destroyed.`;
    await printLines([[], [seg(head, "add")], ...sink.retries.lines(), ...(ctx.destroy ? [] : outputsLines(result.state))], o);
  }
  return EXIT.ok;
}

/** Asks for approval; the access summary stands directly above "Enter a value:", and 'details'
 *  shows every policy the apply writes, before and after. */
async function approve(plan: Plan, live: ReadonlyMap<string, Policy>, o: ApplyCliOptions, destroy: boolean, lintWarnings: number): Promise<boolean> {
  if (o.autoApprove) return true;
  if (!process.stdin.isTTY || !process.stdout.isTTY || o.json) {
    throw new UserError({
      severity: "error",
      summary: `no terminal to ask for approval, so nothing was ${destroy ? "destroyed" : "applied"}`,
      detail: `Review the plan above and run again with --auto-approve, or save it with \`converge plan --out FILE\` and run \`converge apply FILE\`.`,
    });
  }
  const { askApproval } = await import("../views/approval.js");
  const question = destroy ? "Do you really want to destroy all resources?" : "Do you want to perform these actions?";
  for (;;) {
    const a = await askApproval(question, accessSummaryLines(plan, lintWarnings));
    if (a === "yes") return true;
    if (a === "no") return false;
    await printLines(policyDiffLines(plannedPolicies(plan.resource_changes, live, plan.options.refresh).policies), o);
  }
}

/**
 * `apply FILE`: the endpoint, the state and the stack come from -f and the environment, as for
 * `plan`; the file only says what was reviewed. After the file's own checks, the stack is planned
 * again with the saved options and, when the grant changes match, the fresh plan is executed
 * (with the policies it has just read): it is built only from trusted inputs, and every field the
 * comparison leaves out (dependencies, protect, variables) comes from them rather than the file.
 */
async function applySavedPlan(planFile: string, o: ApplyCliOptions, ui: UiStream | undefined): Promise<number> {
  if (o.target.length || o.replace.length || o.refresh !== "true") {
    throw new UserError({ severity: "error", summary: "--target, --replace and --refresh cannot be given with a plan file: it applies with the options it was made with" });
  }
  const saved = readSavedPlan(planFile, planKey());
  const loaded = loadOrExit(o);
  checkStackName(saved, planFile, loaded.stack.name, o.file);
  return underLock(loaded.store, "apply", o, async () => {
    checkNotStale(saved, planFile, await loaded.store.read());
    const { destroy, refresh, targets, replace } = saved.options;
    const progress = progressPrinter(o, ui);
    const { result, prior, cloud } = await planStack(loaded, { ...o, destroy, refresh: String(refresh), target: targets, replace }, progress.onEvent);
    try {
      printDiagnostics(result.diagnostics);
      ui?.diagnostics(result.plan.diagnostics);
      if (result.plan.errored) return EXIT.error;
      checkSameChanges(saved, planFile, result.plan);
      ui?.plan(result.plan, progress.retries.counts());
      return await execute(result.plan, { store: loaded.store, prior, cloud, live: result.live, o, destroy, ui });
    } finally {
      ui?.flush();
      await cloud.close();
    }
  });
}

/** What an apply that had nothing to do did: nothing (for the JSON UI's summary). */
function nothingApplied(prior: State | undefined, stackName: string): ApplyResult {
  return { state: prior ?? newState(stackName), failed: [], skipped: [], counts: { added: 0, changed: 0, destroyed: 0, imported: 0, read: 0 }, interrupted: false };
}

/** `apply` and `destroy` without a plan file: plan, show, ask, execute. */
async function planAndApply(o: ApplyCliOptions, destroy: boolean, ui: UiStream | undefined): Promise<number> {
  const loaded = loadOrExit(o);
  return underLock(loaded.store, destroy ? "destroy" : "apply", o, async () => {
    const progress = progressPrinter(o, ui);
    const planned = await planning((signal) => planStack(loaded, { ...o, destroy }, progress.onEvent, signal));
    const { result, prior, cloud } = planned.value;
    try {
      if (planned.interrupted) return planInterrupted(planned.interrupted);
      printDiagnostics(result.diagnostics);
      ui?.diagnostics(result.plan.diagnostics);
      if (result.plan.errored) return EXIT.error;
      ui?.plan(result.plan, progress.retries.counts());
      const lintWarnings = lintWarningCount(result.plan.diagnostics);
      if (!o.json) await printLines([...progress.lines(), ...planLines(result.plan, { lintWarnings })], o);
      if (!result.plan.applyable) {
        ui?.applied(nothingApplied(prior, loaded.stack.name), destroy, {});
        return EXIT.ok;
      }
      if (!(await approve(result.plan, result.live, o, destroy, lintWarnings))) {
        process.stderr.write(`${destroy ? "Destroy" : "Apply"} cancelled: nothing was changed.\n`);
        return EXIT.error;
      }
      return await execute(result.plan, { store: loaded.store, prior, cloud, live: result.live, o, destroy, ui });
    } finally {
      ui?.flush();
      await cloud.close();
    }
  });
}

/** The JSON UI cannot ask for approval: refused before any work, as Terraform refuses it. */
function refuseUnapprovedJson(destroy: boolean): never {
  throw new UserError({
    severity: "error",
    summary: `${destroy ? "destroy" : "apply"} --json needs --auto-approve${destroy ? "" : " or a plan file"}`,
    detail: `converge cannot ask for approval while it prints JSON. ${destroy ? "Add --auto-approve, or save the plan with `converge plan --destroy --out FILE` and run `converge apply FILE --json`." : "Add --auto-approve, or save the plan with `converge plan --out FILE`, review it, and run `converge apply FILE --json`."} Nothing was ${destroy ? "destroyed" : "applied"}.`,
  });
}

function progressIntervalMs(o: ApplyCliOptions): number {
  const s = Number(o.progressInterval ?? "10");
  if (!Number.isFinite(s) || s <= 0) throw new UserError({ severity: "error", summary: `--progress-interval takes a number of seconds above 0, got "${o.progressInterval}"` });
  return s * 1000;
}

function applyAction(destroy: boolean) {
  return action(async (planFile: string | undefined, o: ApplyCliOptions) => {
    const ui = o.json ? new UiStream(progressIntervalMs(o)) : undefined;
    ui?.version();
    return reportingFailure(o, ui, async () => {
      if (planFile) {
        if (destroy) throw new UserError({ severity: "error", summary: "destroy does not take a plan file; use `converge plan --destroy --out FILE` and `converge apply FILE`" });
        return applySavedPlan(planFile, o, ui);
      }
      if (o.json && !o.autoApprove) refuseUnapprovedJson(destroy);
      return planAndApply(o, destroy, ui);
    });
  });
}

// For the tests of apply_progress: not for users (Terraform's interval is 10 seconds).
const progressIntervalOption = () => new Option("--progress-interval <seconds>", "seconds between apply_progress messages of a running change (--json)").default("10").hideHelp();

export function registerApply(program: Command): void {
  const apply = program.command("apply").argument("[planfile]", "a plan saved with `converge plan --out`").description("Apply the changes (asks for approval unless --auto-approve or a saved plan)");
  addPlanOptions(addStackOptions(apply)).option("--auto-approve", "do not ask for approval").addOption(progressIntervalOption()).action(applyAction(false));
  withExamples(apply, ["converge apply", "converge apply --auto-approve --parallelism 4", "converge plan --out plan.json && converge apply plan.json"]);

  const destroy = program.command("destroy").description("Remove every grant the stack manages (protected resources block it)");
  const destroyAction = applyAction(true);
  addPlanOptions(addStackOptions(destroy)).option("--auto-approve", "do not ask for approval").addOption(progressIntervalOption()).action((o: ApplyCliOptions) => destroyAction(undefined, o));
  withExamples(destroy, ["converge destroy", "converge plan --destroy --out destroy.json && converge apply destroy.json"]);

  const refresh = program.command("refresh").description("Update the state from the live cloud (writes nothing to the cloud)");
  withExamples(addStackOptions(refresh), ["converge refresh", "converge refresh --json"]).action(
    action(async (o: StackOptions) => {
      const loaded = loadOrExit(o);
      return underLock(loaded.store, "refresh", o, async () => {
        const planned = await planning((signal) => planStack(loaded, { ...o, refresh: "true", target: [], replace: [] } as PlanCliOptions, () => {}, signal));
        const { result, prior, cloud } = planned.value;
        await cloud.close();
        if (planned.interrupted) return planInterrupted(planned.interrupted);
        printDiagnostics(result.diagnostics);
        if (result.plan.errored) return EXIT.error;
        if (!prior) {
          await writeOut("There is no state yet: nothing to refresh.\n");
          return EXIT.ok;
        }
        const written = await loaded.store.write({ ...prior, resources: result.refreshed }, versionOf(prior));
        if (o.json) await writeOut(jsonText({ drift: result.plan.resource_drift, serial: written.serial }, 2) + "\n");
        else {
          await printLines([...refreshLines(result.plan), [], [seg(`State refreshed: ${result.refreshed.length} resources (serial ${written.serial}).`)]], o);
        }
        return EXIT.ok;
      });
    }),
  );

  program
    .command("output")
    .argument("[name]", "one output")
    .description("Print the stack's outputs from the state")
    .option("-f, --file <path>", STACK_FILE_HELP)
    .option("--state <path>", STATE_OPTION_HELP)
    .option("--json", "print JSON")
    .option("--raw", "print a string output without quotes")
    .action(
      action(async (name: string | undefined, o: { file?: string; state?: string; json?: boolean; raw?: boolean }) => {
        const state = await stateStoreOf(o).read();
        const outputs = state?.outputs ?? {};
        if (name !== undefined) {
          if (!Object.hasOwn(outputs, name)) throw new UserError({ severity: "error", summary: `output "${name}" not found`, detail: Object.keys(outputs).length ? `Outputs: ${Object.keys(outputs).join(", ")}.` : "The state has no outputs; run converge apply first." });
          const v = outputs[name];
          // --raw is for scripts, $(converge output --raw x): the exact value, but not onto a terminal.
          const raw = (s: string) => (process.stdout.isTTY ? terminalText(s) : s);
          await writeOut(o.json ? jsonText(v) + "\n" : typeof v === "string" && o.raw ? `${raw(v)}\n` : `${terminalText(JSON.stringify(v))}\n`);
          return EXIT.ok;
        }
        if (o.json) await writeOut(jsonText(outputs, 2) + "\n");
        else await writeOut(Object.entries(outputs).map(([k, v]) => terminalText(`${k} = ${JSON.stringify(v)}`)).join("\n") + (Object.keys(outputs).length ? "\n" : ""));
        return EXIT.ok;
      }),
    );
}
