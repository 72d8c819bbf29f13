// `plan --format sarif`: the plan's guardrail results as one SARIF 2.1.0 log on stdout, for code
// scanning tools (../../guardrails/sarif.ts); the plan's diagnostics on stderr. A plan without
// rules gives a log without results; a plan with errors a log whose invocation did not succeed.
import { relative } from "node:path";
import type { EngineEvent } from "../../contracts/events.js";
import type { ShownPlan } from "../../engine/operations.js";
import { sarifLog } from "../../guardrails/sarif.js";
import { printDiagnostics, writeJsonOut } from "../common.js";
import type { PlanView } from "./view.js";

export class SarifPlanView implements PlanView {
  readonly onEvent = (_e: EngineEvent): void => {};

  async planned(shown: ShownPlan): Promise<void> {
    const { plan } = shown;
    printDiagnostics(shown.diagnostics);
    const report = plan.guardrails ?? { rules_digest: "", rules: [], results: [] };
    const failures = plan.errored ? plan.diagnostics.filter((d) => d.severity === "error").map((d) => d.summary) : [];
    const stackUri = relative(process.cwd(), plan.stack.file).split("\\").join("/");
    await writeJsonOut(sarifLog([{ report, stackUri }], plan.errored ? { failures } : {}));
  }

  flush(): void {}

  async close(): Promise<void> {}
}
