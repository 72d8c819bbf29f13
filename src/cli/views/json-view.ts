// The JSON views. JsonStreamView: Terraform's machine-readable UI, one message per line
// (`apply --json`, `destroy --json`, `plan --json-stream`), through ../ui-stream.ts.
// JsonPlanView: `plan --json`, one document, Terraform's plan JSON (nothing while planning).
import type { ApplyResult } from "../../apply/executor.js";
import { UserError } from "../../diagnostics/diagnostic.js";
import type { EngineEvent } from "../../engine/events.js";
import type { PlannedStack } from "../../engine/session.js";
import { noChanges } from "../../engine/tally.js";
import { newState } from "../../state/index.js";
import { toTerraformPlanJson } from "../../plan/terraform-json.js";
import { printDiagnostics, writeJsonOut, writeOut } from "../common.js";
import { RetryTally } from "../render/retry-text.js";
import type { UiStream } from "../ui-stream.js";
import type { ApplyReport, OperationView } from "./view.js";

export class JsonStreamView implements OperationView {
  private retries = new RetryTally();

  constructor(private readonly ui: UiStream) {}

  readonly onEvent = (e: EngineEvent): void => {
    if (e.type === "retry") this.retries.add(e);
    this.ui.onEvent(e);
  };

  async planned(planned: PlannedStack): Promise<void> {
    printDiagnostics(planned.diagnostics);
    this.ui.diagnostics(planned.plan.diagnostics);
    if (!planned.plan.errored) this.ui.plan(planned.plan, this.retries.counts());
    this.ui.flush();
  }

  replanned(planned: PlannedStack): Promise<void> {
    return this.planned(planned);
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
  async unchanged(planned: PlannedStack, destroy: boolean): Promise<void> {
    const result: ApplyResult = { state: planned.prior ?? newState(planned.plan.stack.name), failed: [], skipped: [], interrupted: false };
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

export class JsonPlanView implements OperationView {
  readonly onEvent = (_e: EngineEvent): void => {};

  /** The plan as one document (the caller seals it first); a plan with errors too. */
  async planned(planned: PlannedStack): Promise<void> {
    printDiagnostics(planned.diagnostics);
    await writeJsonOut(toTerraformPlanJson(planned.plan));
  }

  replanned(): Promise<void> {
    throw new Error("plan --json never applies");
  }

  approve(): Promise<boolean> {
    throw new Error("plan --json never applies");
  }

  applying(): void {
    throw new Error("plan --json never applies");
  }

  applied(): Promise<void> {
    throw new Error("plan --json never applies");
  }

  flush(): void {}

  async close(): Promise<void> {}
}
