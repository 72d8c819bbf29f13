// `converge policy test`: a rules file run against cases written as data. A cases file lists
// cases, each a stack (and optionally the seed world the embedded emulator starts from) or a saved
// plan (`plan --out`), and the results expected: each expected result (rule, and any of change,
// principal, role, object, resource) must be found, and every result must be expected. A stack is
// planned by the engine every command uses, into a temporary state: nothing is written beside it;
// a saved plan's access changes are judged on the end state it recorded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type Diagnostic, error, UserError } from "../diagnostics/diagnostic.js";
import type { GuardrailReport, GuardrailResult } from "../generated/schemas.js";
import { SourceDocument } from "../yaml/source.js";
import { readInputFile, MAX_SOURCE_BYTES } from "../fs/input-file.js";

export interface PolicyCase {
  name: string;
  /** A stack to plan, or (`plan`) a saved plan to judge: one of the two. */
  stack?: string;
  plan?: string;
  seed?: string;
  expect: Partial<GuardrailResult>[];
}

export interface CaseOutcome {
  case: PolicyCase;
  report: GuardrailReport | undefined;
  missing: Partial<GuardrailResult>[];
  unexpected: GuardrailResult[];
}

const KEYS = ["rule", "change", "principal", "role", "object", "resource"] as const;

/** The cases of a cases file, paths made absolute; problems as a UserError at their line. */
export function readCases(file: string): PolicyCase[] {
  const src = new SourceDocument(file, readInputFile(file, "cases file", MAX_SOURCE_BYTES).toString("utf8"));
  const doc = src.toJS() as { cases?: unknown } | null;
  const diags: Diagnostic[] = [];
  const at = (path: (string | number)[], summary: string) => {
    const p = src.position(path);
    diags.push(error(summary, { file, line: p.line, column: p.column, code: "policy/cases" }));
  };
  const list = doc?.cases;
  if (!Array.isArray(list))
    throw new UserError(error(`${file}: a cases file is a mapping with cases: (a list)`, { file }));
  const out: PolicyCase[] = [];
  list.forEach((c: Record<string, unknown> | null, i) => {
    if (!c || typeof c.name !== "string" || typeof (c.stack ?? c.plan) !== "string")
      return at(["cases", i], "a case needs a name and a stack (or a saved plan: plan)");
    if (c.stack !== undefined && c.plan !== undefined)
      return at(["cases", i, "plan"], "a case has a stack or a saved plan (plan), not both");
    if (c.plan !== undefined && c.seed !== undefined)
      return at(["cases", i, "seed"], "a saved plan's case has no seed: the plan holds what the rules judge");
    const expect = c.expect ?? [];
    const fine = Array.isArray(expect) && expect.every((e) => e && typeof e === "object" && typeof e.rule === "string");
    if (!fine) return at(["cases", i, "expect"], "expect is a list of results, each with at least a rule");
    const seed = typeof c.seed === "string" ? { seed: resolve(dirname(file), c.seed) } : {};
    const source = typeof c.stack === "string" ? { stack: resolve(dirname(file), c.stack) } : {};
    const plan = typeof c.plan === "string" ? { plan: resolve(dirname(file), c.plan) } : {};
    out.push({
      name: c.name,
      ...source,
      ...plan,
      ...seed,
      expect: expect as Partial<GuardrailResult>[],
    });
  });
  if (diags.length) throw new UserError(diags);
  return out;
}

const matches = (want: Partial<GuardrailResult>, got: GuardrailResult) =>
  KEYS.every((k) => want[k] === undefined || want[k] === got[k]);

/** How `report` compares with what `c` expects. */
export function judgeCase(c: PolicyCase, report: GuardrailReport | undefined): CaseOutcome {
  const results = report?.results ?? [];
  const missing = c.expect.filter((w) => !results.some((r) => matches(w, r)));
  const unexpected = results.filter((r) => !c.expect.some((w) => matches(w, r)));
  return { case: c, report, missing, unexpected };
}

/** A temporary directory for one case's state, removed after `fn`. */
export async function inScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "converge-policy-test-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
