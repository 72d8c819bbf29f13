// The JSON views. JsonStreamView: Terraform's machine-readable UI, one message per line
// (`apply --json`, `destroy --json`, `plan --json-stream`), through ../ui-stream.ts.
// JsonPlanView: `plan --json`, one document, Terraform's plan JSON (nothing while planning).
import type { ApplyResult } from "../../apply/executor.js";
import { UserError } from "../../diagnostics/diagnostic.js";
import type { EngineEvent } from "../../contracts/events.js";
import type { ShownPlan } from "../../engine/operations.js";
import { noChanges } from "../../engine/tally.js";
import { newState } from "../../state/index.js";
import { toTerraformPlanJson } from "../../plan/terraform-json.js";
import { printDiagnostics, writeJsonOut } from "../common.js";
import { RetryTally } from "../render/retry-text.js";
import type { UiStream } from "../ui-stream.js";
import type { ApplyReport, ApplyView, PlanView } from "./view.js";

export class JsonStreamView implements ApplyView {
  private retries = new RetryTally();

  constructor(private readonly ui: UiStream) {}

  readonly onEvent = (e: EngineEvent): void => {
    if (e.type === "retry") this.retries.add(e);
    this.ui.onEvent(e);
  };

  async planned(shown: ShownPlan): Promise<void> {
    printDiagnostics(shown.diagnostics);
    this.ui.diagnostics(shown.plan.diagnostics);
    if (!shown.plan.errored) this.ui.plan(shown.plan, this.retries.counts());
    this.ui.flush();
  }

  replanned(shown: ShownPlan): Promise<void> {
    return this.planned(shown);
  }

  /** The JSON UI cannot ask: an apply with it is refused before any work unless approved. */
  approve(): Promise<boolean> {
    throw new UserError({ severity: "error", summary: "converge cannot ask for approval while it prints JSON" });
  }

  applying(): void {
    this.retries = new RetryTally();
  }

  async applied(report: ApplyReport): Promise<void> {
    const failed = report.result.failed.map((f) => f.diagnostic);
    printDiagnostics(failed);
    this.ui.diagnostics(failed);
    this.ui.applied(report.result, report.counts, report.destroy, this.retries.counts());
    this.ui.flush();
  }

  /** A plan with nothing to apply still ends with the apply's summary messages. */
  async unchanged(shown: ShownPlan, destroy: boolean): Promise<void> {
    const result: ApplyResult = {
      state: shown.state() ?? newState(shown.plan.stack.name),
      failed: [],
      skipped: [],
      interrupted: false,
    };
    this.ui.applied(result, noChanges(), destroy, {});
    this.ui.flush();
  }

  flush(): void {
    this.ui.flush();
  }

  async close(): Promise<void> {
    this.ui.stopProgress();
    this.ui.flush();
  }
}

export class JsonPlanView implements PlanView {
  readonly onEvent = (_e: EngineEvent): void => {};

  /** The plan as one document (the caller seals it first); a plan with errors too. */
  async planned(shown: ShownPlan): Promise<void> {
    printDiagnostics(shown.diagnostics);
    await writeJsonOut(toTerraformPlanJson(shown.plan));
  }

  flush(): void {}

  async close(): Promise<void> {}
}
