// Guardrail results as SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/), for code
// scanning tools: one run, the rules as the tool's rules, each result at the stack file that
// causes it and named by the resource's address. Levels: mandatory error, owner-approval
// warning, advisory note.
import type { GuardrailReport, GuardrailResult } from "../generated/schemas.js";
import { TOOL_VERSION } from "../base/version.js";

const LEVEL = { mandatory: "error", "owner-approval": "warning", advisory: "note" } as const;

/** One report and the stack file (a URI relative to where the log is read) its results are in. */
export interface SarifInput {
  report: GuardrailReport;
  stackUri: string;
}

const message = (r: GuardrailResult) =>
  `${r.rule} (${r.enforcement}): ${r.change} of ${r.role} to ${r.principal} on ${r.object}` +
  (r.error ? `; the rule could not be evaluated: ${r.error}` : "");

/** The log of `inputs`; with `failures`, a run whose invocation did not succeed, saying why. */
export function sarifLog(inputs: readonly SarifInput[], run: { failures?: string[] } = {}): Record<string, unknown> {
  const rules = new Map<string, Record<string, unknown>>();
  const results: Record<string, unknown>[] = [];
  for (const { report, stackUri } of inputs) {
    for (const r of report.rules) {
      if (rules.has(r.id)) continue;
      const level = LEVEL[r.enforcement];
      rules.set(r.id, { id: r.id, shortDescription: { text: r.description }, defaultConfiguration: { level } });
    }
    for (const r of report.results) {
      const logical = r.resource ? [{ fullyQualifiedName: r.resource, kind: "resource" }] : [];
      const location = { physicalLocation: { artifactLocation: { uri: stackUri } }, logicalLocations: logical };
      results.push({
        ruleId: r.rule,
        level: LEVEL[r.enforcement],
        message: { text: message(r) },
        locations: [location],
      });
    }
  }
  const driver = { name: "converge", version: TOOL_VERSION, rules: [...rules.values()] };
  return {
    version: "2.1.0",
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    runs: [{ tool: { driver }, ...invocations(run.failures), results }],
  };
}

function invocations(failures: string[] | undefined) {
  if (!failures) return {};
  const toolExecutionNotifications = failures.map((text) => ({ level: "error", message: { text } }));
  return { invocations: [{ executionSuccessful: false, toolExecutionNotifications }] };
}
