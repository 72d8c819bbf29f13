// Terraform's machine-readable UI for converge (`apply --json`, `destroy --json`,
// `plan --json-stream`): one JSON object per line with @level, @message, @module ("converge.ui"),
// @timestamp and type, as schemas/events.schema.json describes. The engine's events become
// Terraform's messages (refresh_start, apply_start, apply_progress…) or, for what Terraform has
// no message for, converge's own in the same envelope (policy_write, state_saved, retry…).
import type { ApplyResult } from "../apply/executor.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { jsonText } from "../diagnostics/terminal-text.js";
import { fileTexts, terraformDiagnostic } from "../diagnostics/terraform-diagnostic.js";
import type { EngineEvent, StepAction } from "../contracts/events.js";
import type { ChangeCounts } from "../engine/tally.js";
import type { Plan, UiChangeAction } from "../generated/schemas.js";
import { TOOL_VERSION } from "../base/version.js";
import { batchedStdout } from "./common.js";
import { retryWords } from "./render/retry-text.js";
import { verbs } from "./render/verbs.js";
import { appliedBodies, diagnosticBody, planBodies, type UiBody, uiResource } from "./ui-messages.js";

const UI_MODULE = "converge.ui";
const UI_VERSION = "1.2";
/** Terraform's: an apply_progress message for a change still running, every 10 seconds. */
const PROGRESS_INTERVAL_MS = 10_000;

type Step = Extract<EngineEvent, { type: "step" }>;
type Running = { t0: number; timer: NodeJS.Timeout };

const STEP_ACTION: Record<Exclude<StepAction, "no-op">, UiChangeAction> = {
  create: "create",
  update: "update",
  replace: "replace",
  delete: "delete",
  read: "read",
  import: "import",
};
const seconds = (ms: number) => Math.round(ms) / 1000;
/** Seconds in a message, as the terminal shows them ("2.5s"). */
const shown = (s: number) => `${s.toFixed(1)}s`;

export class UiStream {
  private readonly out = batchedStdout();
  private readonly texts = fileTexts();
  /** Resource types by address, from the plan (step events carry only the address). */
  private readonly types = new Map<string, string>();
  private readonly running = new Map<string, Running>();
  /** Once the plan is out, data source reads are reported by their apply steps. */
  private applying = false;

  constructor(private readonly progressIntervalMs = PROGRESS_INTERVAL_MS) {}

  /** Writes what is buffered (before anything else goes to stdout). */
  flush(): void {
    this.out.flush();
  }

  /** The first line. */
  version(): void {
    this.emit({ type: "version", terraform: TOOL_VERSION, ui: UI_VERSION, message: `converge ${TOOL_VERSION}` });
  }

  diagnostics(ds: readonly Diagnostic[]): void {
    for (const d of ds) this.emit(diagnosticBody(terraformDiagnostic(d, this.texts)));
  }

  /** The plan's changes, counts, access summary and outputs; apply steps follow. */
  plan(plan: Plan, retries: Record<string, number>): void {
    for (const c of plan.resource_changes) this.types.set(c.address, c.type);
    for (const b of planBodies(plan, retries)) this.emit(b);
    this.applying = true;
  }

  /** How the apply ended; stops the progress timers. */
  applied(result: ApplyResult, counts: ChangeCounts, destroy: boolean, retries: Record<string, number>): void {
    this.stopProgress();
    for (const b of appliedBodies(result, counts, destroy, retries)) this.emit(b);
  }

  stopProgress(): void {
    for (const r of this.running.values()) clearInterval(r.timer);
    this.running.clear();
  }

  onEvent = (e: EngineEvent): void => {
    switch (e.type) {
      case "refresh":
        if (e.phase === "error") return;
        for (const r of e.resources) {
          const hook = { resource: uiResource(r.address, r.type), id_key: "policy", id_value: e.policy };
          if (e.phase === "start")
            this.emit({
              type: "refresh_start",
              hook,
              message: `${r.address}: Refreshing state... [policy=${e.policy}]`,
            });
          else
            this.emit({
              type: "refresh_complete",
              hook,
              message: `${r.address}: Refresh complete [policy=${e.policy}]`,
            });
        }
        return;
      case "read":
        if (!this.applying) this.read(e);
        return;
      case "step":
        return this.step(e);
      case "policy-write": {
        const { policy, phase, attempts, written, ms } = e;
        const body = {
          policy,
          phase,
          ...(attempts !== undefined ? { attempts } : {}),
          ...(written !== undefined ? { written } : {}),
          ...(ms !== undefined ? { elapsed_seconds: seconds(ms) } : {}),
        };
        const words = {
          start: "writing its IAM policy...",
          done: written === false ? "IAM policy already up to date" : "IAM policy written",
          error: "writing its IAM policy failed",
          interrupted: "IAM policy not written (interrupted)",
        }[phase];
        this.emit({ type: "policy_write", policy_write: body, message: `${policy}: ${words}` });
        return;
      }
      case "state-saved":
        this.emit({ type: "state_saved", state: { serial: e.serial }, message: `State saved (serial ${e.serial})` });
        return;
      case "retry": {
        const retry = {
          resource: e.resource,
          call: e.call,
          status: e.status,
          ...(e.httpStatus !== undefined ? { http_status: e.httpStatus } : {}),
          attempt: e.attempt,
          max_attempts: e.maxAttempts,
          delay_seconds: seconds(e.delayMs),
          reason: e.reason,
        };
        this.emit({ type: "retry", retry, level: "warn", message: retryWords(e) });
        return;
      }
      case "diagnostic":
        this.diagnostics([e.diagnostic]);
        return;
    }
  };

  /** A data source read while planning: Terraform reports it as an apply of action read. */
  private read(e: Extract<EngineEvent, { type: "read" }>): void {
    const hook = { resource: uiResource(e.address, e.token), action: "read" as const };
    if (e.phase === "start")
      this.emit({
        type: "apply_start",
        hook: { ...hook, id_key: "name", id_value: e.object },
        message: `${e.address}: Reading... [name=${e.object}]`,
      });
    else if (e.phase === "done")
      this.emit({
        type: "apply_complete",
        hook: { ...hook, id_key: "name", id_value: e.object, elapsed_seconds: seconds(e.ms ?? 0) },
        message: `${e.address}: Read complete after ${shown(seconds(e.ms ?? 0))} [name=${e.object}]`,
      });
    else
      this.emit({
        type: "apply_errored",
        hook: { ...hook, elapsed_seconds: seconds(e.ms ?? 0) },
        message: `${e.address}: Read errored after ${shown(seconds(e.ms ?? 0))}`,
      });
  }

  private step(e: Step): void {
    if (e.action === "no-op") return;
    const action = STEP_ACTION[e.action];
    const type = this.types.get(e.address) ?? "";
    const resource = uiResource(e.address, type);
    const id = e.policy ? { id_key: "policy", id_value: e.policy } : {};
    const idText = e.policy ? ` [policy=${e.policy}]` : "";
    const [doing, done] = verbs(e.action);
    if (e.phase === "start") {
      this.emit({
        type: "apply_start",
        hook: { resource, action, ...id },
        message: `${e.address}: ${doing}...${idText}`,
      });
      this.track(e.address, type, action, doing);
      return;
    }
    const started = this.running.get(e.address);
    if (started) clearInterval(started.timer);
    this.running.delete(e.address);
    const elapsed_seconds = seconds(e.ms ?? (started ? Date.now() - started.t0 : 0));
    if (e.phase === "done")
      this.emit({
        type: "apply_complete",
        hook: { resource, action, ...id, elapsed_seconds },
        message: `${e.address}: ${done} after ${shown(elapsed_seconds)}${idText}`,
      });
    else if (e.phase === "error")
      this.emit({
        type: "apply_errored",
        hook: { resource, action, elapsed_seconds },
        message: `${e.address}: ${doing} errored after ${shown(elapsed_seconds)}`,
      });
    else if (e.phase === "skipped")
      this.emit({
        type: "apply_skipped",
        hook: { resource, action },
        message: `${e.address}: Skipped (a change it depends on failed)`,
      });
    else
      this.emit({
        type: "apply_interrupted",
        hook: { resource, action },
        message: `${e.address}: Not done (interrupted)`,
      });
  }

  /** apply_progress every interval while the change runs. */
  private track(address: string, type: string, action: UiChangeAction, doing: string): void {
    const t0 = Date.now();
    const timer = setInterval(() => {
      const elapsed = seconds(Date.now() - t0);
      this.emit({
        type: "apply_progress",
        hook: { resource: uiResource(address, type), action, elapsed_seconds: elapsed },
        message: `${address}: Still ${doing.toLowerCase()}... [${shown(elapsed)} elapsed]`,
      });
    }, this.progressIntervalMs);
    timer.unref();
    this.running.set(address, { t0, timer });
  }

  private emit(b: UiBody): void {
    const { message, level, type, ...payload } = b;
    this.out.line(
      jsonText({
        "@level": level ?? "info",
        "@message": message,
        "@module": UI_MODULE,
        "@timestamp": new Date().toISOString(),
        ...payload,
        type,
      }),
    );
  }
}
