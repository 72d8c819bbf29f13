// Runs the jobs of the GitHub workflow `converge init --ci github` writes, as GitHub would run
// them, step by step on this machine: every `run:` step through bash (GitHub's default shell:
// bash --noprofile --norc -eo pipefail), with the workflow's and the step's env and the
// `${{ }}` expressions given; the `uses:` steps are done here (checkout: a fresh copy of the
// repository; upload-artifact: the files copied to the artifact folder; auth: skipped when its
// `if:` is false); `npm ci` is the package linked into node_modules.
import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { BIN, REPO } from "../e2e/helpers.js";
import { bash } from "./shell.js";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
export interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, { if: string; steps: Step[] }>;
}

export const readWorkflow = (file: string) => parse(readFileSync(file, "utf8")) as Workflow;

export interface JobRun {
  /** Each step: its name (or what it runs or uses), and what it printed. */
  steps: { step: string; code: number; output: string }[];
  failed: boolean;
}

/** The value of one `${{ }}` expression; one the test does not know fails the test. */
function evaluate(expr: string, values: Record<string, string>): string {
  const v = values[expr.trim()];
  if (v === undefined) throw new Error(`the workflow uses \${{ ${expr.trim()} }}, which the test does not give`);
  return v;
}
const expand = (text: string, values: Record<string, string>) =>
  text.replace(/\$\{\{(.*?)\}\}/g, (_, e: string) => evaluate(e, values));

/** Makes `dir` a fresh checkout of `repo` with the package installed (what checkout and npm ci do). */
export function checkout(repo: string, dir: string): void {
  cpSync(repo, dir, { recursive: true });
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(REPO, join(dir, "node_modules", "converge-iam"), "dir");
  symlinkSync(BIN, join(dir, "node_modules", ".bin", "converge"));
}

/** Runs job `name` of `wf` in `dir` (a checkout); `values` answers the expressions, `env` adds to the runner's. */
export async function runJob(
  wf: Workflow,
  name: string,
  dir: string,
  values: Record<string, string>,
  env: Record<string, string>,
  artifact: string,
): Promise<JobRun> {
  const job = wf.jobs[name]!;
  const steps: JobRun["steps"] = [];
  const expanded = (vars: Record<string, string> = {}) =>
    Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, expand(String(v), values)]));
  const base = { ...(process.env as Record<string, string>), ...env, ...expanded(wf.env) };
  for (const step of job.steps) {
    const label = step.name ?? step.run ?? step.uses ?? "?";
    if (step.if !== undefined && evaluate(step.if, values) !== "true") continue;
    if (step.uses) {
      if (step.uses.startsWith("actions/upload-artifact@")) {
        mkdirSync(artifact, { recursive: true });
        const paths = String(step.with!.path)
          .split("\n")
          .map((f) => f.trim())
          .filter(Boolean);
        for (const f of paths) cpSync(join(dir, f), join(artifact, f));
      } else if (!/^actions\/(checkout|setup-node)@/.test(step.uses)) {
        throw new Error(`the test does not do ${step.uses}`);
      }
      steps.push({ step: label, code: 0, output: "" });
      continue;
    }
    if (step.run === "npm ci") continue;
    const stepEnv = expanded(step.env);
    const r = await bash(expand(step.run!, values), dir, { ...base, ...stepEnv }, 180_000);
    steps.push({ step: label, ...r });
    if (r.code !== 0) return { steps, failed: true };
  }
  return { steps, failed: false };
}
