// `converge policy test RULES CASES...`: guardrail rules tested like code (../../guardrails/cases.ts).
// Text: one line a case, PASS or FAIL with what was missing or unexpected; --format sarif: the
// results of every case's plan as SARIF 2.1.0 on stdout (the verdicts on stderr). Exit 0 when
// every case passes, 1 otherwise.
import { join, relative } from "node:path";
import type { Command } from "commander";
import { type CaseOutcome, inScratch, judgeCase, type PolicyCase, readCases } from "../../guardrails/cases.js";
import { sarifLog } from "../../guardrails/sarif.js";
import { jsonText, terminalText } from "../../diagnostics/terminal-text.js";
import type { GuardrailResult } from "../../generated/schemas.js";
import { type Diagnostic, hasErrors, UserError } from "../../diagnostics/diagnostic.js";
import { loadRuleSet } from "../../guardrails/rules.js";
import { evaluateSaved } from "../../guardrails/evaluate.js";
import { planKey } from "../../plan/saved-plan.js";
import { readSavedPlan } from "./saved-plan-file.js";
import { action, printDiagnostics, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";

const show = (r: Partial<GuardrailResult>) =>
  Object.entries(r)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");

/** A saved plan's case: the rules judge its access changes on the end state it recorded. */
function runSavedCase(rules: string, c: PolicyCase & { plan: string }): CaseOutcome {
  const plan = readSavedPlan(c.plan, planKey());
  const diags: Diagnostic[] = [];
  const ruleSet = loadRuleSet({}, [rules], diags);
  if (hasErrors(diags)) throw new UserError(diags);
  const report = ruleSet ? evaluateSaved(ruleSet, plan) : undefined;
  if (ruleSet && !report) {
    const summary = `case "${c.name}": the saved plan ${c.plan} does not record the end state rules judge`;
    const detail = "It was made without guardrail rules: make it again with `converge plan --out FILE --policy RULES`.";
    throw new UserError({ severity: "error", summary, detail });
  }
  return judgeCase(c, report);
}

async function runCase(rules: string, c: PolicyCase): Promise<CaseOutcome> {
  if (c.plan !== undefined) return runSavedCase(rules, { ...c, plan: c.plan });
  const { openStackFile } = await import("../../engine/session.js");
  const { preview } = await import("../../engine/operations.js");
  const stack = c.stack!;
  return inScratch(async (dir) => {
    const session = await openStackFile({ file: stack, state: join(dir, "state.json"), policyFiles: [rules] });
    // A seed world: the embedded emulator starts from it (never the stack's own endpoint).
    if (c.seed) Object.assign(session.stack.provider, { endpoint: "embedded", seed: c.seed });
    const request = {
      refresh: true,
      destroy: false,
      targets: [],
      replace: [],
      parallelism: 10,
      callTimeoutMs: 120_000,
    };
    const { shown } = await preview(session, request);
    printDiagnostics(shown.diagnostics.filter((d) => d.severity === "error"));
    if (shown.plan.errored) throw new UserError({ severity: "error", summary: `case "${c.name}": the plan failed` });
    return judgeCase(c, shown.plan.guardrails);
  });
}

function verdict(o: CaseOutcome): string {
  if (!o.missing.length && !o.unexpected.length) return `PASS ${terminalText(o.case.name)}\n`;
  const lines = [`FAIL ${o.case.name}`];
  for (const m of o.missing) lines.push(`  expected, not found: ${show(m)}`);
  for (const u of o.unexpected) lines.push(`  found, not expected: ${show(u)}`);
  return `${lines.map((l) => terminalText(l)).join("\n")}\n`;
}

export function registerPolicy(program: Command): void {
  const policy = program.command("policy").description("Guardrail rules on access changes");
  policy
    .command("test <rules> <cases...>")
    .description("Run a rules file against cases written as data (a stack and a seed world, or a saved plan)")
    .option("--format <format>", "text, or sarif (SARIF 2.1.0 for code scanning tools)", "text")
    .option("--no-color", "plain text output")
    .action(
      action(async (rules: string, files: string[], o: { format: string }) => {
        if (!["text", "sarif"].includes(o.format)) {
          throw new UserError({ severity: "error", summary: `--format takes text or sarif, got "${o.format}"` });
        }
        const outcomes: CaseOutcome[] = [];
        for (const f of files) for (const c of readCases(f)) outcomes.push(await runCase(rules, c));
        const text = outcomes.map(verdict).join("");
        if (o.format === "sarif") {
          const inputs = outcomes.flatMap((x) =>
            x.report ? [{ report: x.report, stackUri: relative(process.cwd(), x.case.stack ?? x.case.plan!) }] : [],
          );
          process.stderr.write(text);
          await writeOut(jsonText(sarifLog(inputs), 2) + "\n");
        } else await writeOut(text);
        return outcomes.every((x) => !x.missing.length && !x.unexpected.length) ? EXIT.ok : EXIT.error;
      }),
    );
}
