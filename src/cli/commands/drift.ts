// `converge drift`: is reality still what was approved? Read-only (no lock, no state write, one read
// per policy): the findings as text, JSON, Markdown or SARIF, exit 0 (none), 2 (drift) or 1 (error).
// `--adopt --out FILE` writes a stack adopting the unmanaged grants; `--remediate --out PLAN` saves a
// plan restoring what the state approved; `--watch` checks again and again (./drift-watch.ts).
import { writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import type { Command } from "commander";
import { stringify } from "yaml";
import { UserError } from "../../diagnostics/diagnostic.js";
import { jsonText } from "../../diagnostics/terminal-text.js";
import { checkDrift, type DriftReport, type DriftRequest, remediatedAddresses } from "../../engine/drift.js";
import { preview } from "../../engine/operations.js";
import type { StackSession } from "../../engine/session.js";
import type { DriftFinding } from "../../plan/drift.js";
import { planKey, savePlan, sealPlan } from "../../plan/saved-plan.js";
import { withoutCredentials } from "../../cloud/endpoint.js";
import { fsError } from "../../fs/errors.js";
import { makeDirsSync, writablePath, type FileRole } from "../../fs/regular-files.js";
import { ratesOf } from "../rate-option.js";
import { retryPrinter } from "../render/retry-text.js";
import { driftMarkdown, driftText } from "../render/drift-text.js";
import { driftSarif, type Where } from "../render/drift-sarif.js";
import { planning, planInterrupted } from "../interrupt.js";
import { generateStack } from "../../engine/stack-generation.js";
import { stackNameOfFile } from "./stack-writer.js";
import { type DriftOptions, runWatch } from "./drift-watch.js";

export type { DriftOptions };
import { addStackOptions, action, callTimeoutOf, openStackOf, parallelismOf, printDiagnostics } from "../common.js";
import { withExamples, writeJsonOut, writeOut } from "../common.js";
import { EXIT } from "../exit-codes.js";

const FORMATS = ["text", "markdown", "sarif"];

/** Refuses what cannot go together, before anything is read. */
function checkOptions(o: DriftOptions): void {
  const bad = (summary: string, detail?: string): never => {
    throw new UserError({ severity: "error", summary, ...(detail ? { detail } : {}) });
  };
  if (!FORMATS.includes(o.format)) bad(`--format takes text, markdown or sarif, got "${o.format}"`);
  if (o.json && o.format !== "text") bad("--json cannot be combined with --format");
  if (o.adopt && o.remediate) bad("--adopt and --remediate each write a file: run them one at a time");
  if ((o.adopt || o.remediate) && !o.out) bad(`--${o.adopt ? "adopt" : "remediate"} needs --out FILE`);
  if (o.out && !o.adopt && !o.remediate) bad("--out is for --adopt (a stack file) or --remediate (a plan file)");
  if (o.watch && (o.adopt || o.remediate)) bad("--watch reports drift; run --adopt or --remediate without it");
  if (o.watch && o.format !== "text") bad("--watch prints text, or JSON lines with --json");
}

export const requestOf = (o: DriftOptions): DriftRequest => ({
  parallelism: parallelismOf(o),
  callTimeoutMs: callTimeoutOf(o),
  rates: ratesOf(o),
  strict: o.strict === true,
});

/** One check, Ctrl-C caught while it reads; undefined once interrupted (the exit code is set). */
export async function oneCheck(session: StackSession, o: DriftOptions): Promise<DriftReport | number> {
  const emit = retryPrinter({ json: o.json === true || o.format !== "text" });
  const controls = {
    async planning<T>(run: (signal: AbortSignal | undefined) => Promise<T>) {
      const { value, interrupted } = await planning(run);
      return { value, stopped: interrupted };
    },
  };
  const { report, stopped } = await checkDrift(session, requestOf(o), { emit }, controls);
  if (stopped) return planInterrupted(stopped);
  printDiagnostics(report.diagnostics);
  return report;
}

/** Where the stack file declares a resource. */
function whereOf(session: StackSession): Where {
  return (address) => {
    const r = address === undefined ? undefined : session.stack.resources.get(address);
    if (!r) return undefined;
    const p = session.stack.source.position(["resources", r.decl], { key: true });
    return { line: p.line, column: p.column };
  };
}

/** The findings as JSON: stable field names, for scripts. */
export function driftJson(session: StackSession, report: DriftReport): unknown {
  return {
    format_version: "1.0",
    stack: session.stack.name,
    workspace: session.workspace,
    policies_read: report.policies,
    drift: report.findings.length > 0,
    findings: report.findings,
  };
}

async function printReport(session: StackSession, report: DriftReport, o: DriftOptions): Promise<void> {
  const { findings, policies } = report;
  if (o.json) return writeJsonOut(driftJson(session, report));
  if (o.format === "markdown") return writeOut(driftMarkdown(findings, policies, session.stack.name));
  if (o.format === "sarif") {
    const uri = relative(process.cwd(), session.stack.file).split("\\").join("/");
    return writeOut(jsonText(driftSarif(findings, uri, whereOf(session)), 2) + "\n");
  }
  return writeOut(driftText(findings, policies));
}

const ADOPT_FILE: FileRole = {
  what: "stack file",
  detail: "drift --adopt writes a regular file (or where a symlink to one points). Name another file with --out.",
};

/** The unmanaged grants as the policies `generateStack` adopts, one per object. */
function unmanagedPolicies(findings: readonly DriftFinding[]) {
  const byObject = new Map<string, { role: string; members: string[]; condition?: DriftFinding["condition"] }[]>();
  for (const f of findings.filter((x) => x.class === "unmanaged")) {
    const bindings = byObject.get(f.object) ?? [];
    byObject.set(f.object, bindings);
    bindings.push({ role: f.role, members: [f.member], ...(f.condition ? { condition: f.condition } : {}) });
  }
  return [...byObject].map(([name, bindings]) => ({ name, policy: { bindings } }));
}

/** `--adopt --out FILE`: a stack of member resources, each importing one unmanaged grant. */
async function adopt(session: StackSession, report: DriftReport, o: DriftOptions): Promise<void> {
  const policies = unmanagedPolicies(report.findings);
  if (!policies.length) return void process.stderr.write("No unmanaged grants: nothing to adopt, no file written.\n");
  const target = await writablePath(o.out!, ADOPT_FILE);
  const name = stackNameOfFile(target) ?? `${session.stack.name}-adopted`;
  const { endpoint, seed } = session.stack.provider;
  const here = dirname(resolve(target));
  const seedFile = endpoint === "embedded" && seed ? relative(here, seed) : undefined;
  const stack = generateStack(name, withoutCredentials(endpoint), policies, "member", false, seedFile);
  const from = session.stack.name;
  stack.description = `Adopted by converge drift --adopt: the grants no resource of stack "${from}" managed`;
  const count = Object.keys(stack.resources as object).length;
  const header =
    "# Generated by converge drift --adopt. Review it, then run converge plan -f on it: " +
    "it shows only imports. Or move its resources into the stack they belong to.\n";
  try {
    makeDirsSync(here);
    writeFileSync(target, header + stringify(stack, { lineWidth: 0 }), { flag: o.force ? "w" : "wx" });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      throw new UserError({
        severity: "error",
        summary: `${o.out} already exists; drift --adopt does not overwrite it`,
        detail: "Pass --force to replace it, or choose another --out file.",
      });
    }
    throw fsError(e, "write the stack file", target);
  }
  process.stderr.write(`Wrote ${count} resources adopting the unmanaged grants to ${o.out} (stack "${name}").\n`);
}

/** `--remediate --out PLAN`: a plan of the drifted resources only, saved to be reviewed and applied. */
async function remediate(session: StackSession, report: DriftReport, o: DriftOptions): Promise<number | undefined> {
  const targets = remediatedAddresses(report.findings);
  if (!targets.length) {
    process.stderr.write("Nothing to remediate: no drift of a grant the stack manages; no plan written.\n");
    return undefined;
  }
  const out = await writablePath(o.out!, { what: "plan file", detail: "Name another file with --out." });
  const request = { ...requestOf(o), refresh: true, destroy: false, targets, replace: [] };
  const { shown, stopped } = await preview(
    session,
    request,
    { emit: retryPrinter({ json: true }) },
    {
      planning: async (run) => {
        const { value, interrupted } = await planning(run);
        return { value, stopped: interrupted };
      },
    },
  );
  if (stopped) return planInterrupted(stopped);
  printDiagnostics(shown.diagnostics);
  if (shown.plan.errored) return EXIT.error;
  savePlan(out, sealPlan(shown.plan, planKey()));
  process.stderr.write(
    `Saved the plan restoring ${targets.length} resources (${targets.join(", ")}) to ${o.out}: ` +
      `review it with converge show ${o.out}, apply it with converge apply ${o.out}.\n`,
  );
  return undefined;
}

async function runDrift(o: DriftOptions): Promise<number> {
  checkOptions(o);
  const session = await openStackOf(o);
  if (o.watch) return runWatch(session, o, oneCheck);
  const report = await oneCheck(session, o);
  if (typeof report === "number") return report;
  if (report.errored) return EXIT.error;
  await printReport(session, report, o);
  if (o.adopt) await adopt(session, report, o);
  if (o.remediate) {
    const code = await remediate(session, report, o);
    if (code !== undefined) return code;
  }
  return report.findings.length ? EXIT.changes : EXIT.ok;
}

export function registerDrift(program: Command): void {
  const cmd = program.command("drift").description("Report what changed outside converge, classified (read-only)");
  addStackOptions(cmd, { lock: false });
  withExamples(cmd, [
    "converge drift                      # 0 no drift, 2 drift, 1 error",
    "converge drift --format sarif > drift.sarif",
    "converge drift --adopt --out adopted.yaml",
    "converge drift --remediate --out restore.plan && converge apply restore.plan",
    "converge drift --watch --interval 10m",
  ]);
  cmd
    .option("--format <format>", "text, markdown or sarif", "text")
    .option("--adopt", "write a stack adopting the unmanaged grants to --out")
    .option("--remediate", "save a plan restoring the approved state to --out")
    .option("--out <file>", "with --adopt: the stack file; with --remediate: the plan file")
    .option("--force", "with --adopt: overwrite --out")
    .option("--watch", "check again after each --interval; print only new drift (SIGUSR1: check now)")
    .option("--interval <duration>", "with --watch: time between checks, with 10% jitter", "10m")
    .action(action((o: DriftOptions) => runDrift(o), { exitWhenDone: true }));
}
