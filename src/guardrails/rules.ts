// Guardrail rules: read from the stack's `policies:` section and from rules files (--policy FILE,
// CONVERGE_POLICY), checked and compiled at load with positioned diagnostics, the built-in rules
// added (./builtins.ts). A rule set has a digest: a saved plan records it, and `apply FILE`
// refuses a plan made under other rules.
import { createHash } from "node:crypto";
import { delimiter } from "node:path";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { errorAt, type DocPath, SourceDocument } from "../yaml/source.js";
import { decodeUtf8 } from "../base/utf8.js";
import { InputFileError, MAX_SOURCE_BYTES, readInputFile } from "../fs/input-file.js";
import { canonicalJson } from "../base/canonical-json.js";
import { builtinRules, type BuiltinSettings } from "./builtins.js";
import { compileCondition, isProblem } from "./compile.js";

import { ENFORCEMENTS, type Enforcement, type Rule } from "./rule.js";

export interface RuleSet {
  rules: Rule[];
  /** sha256 of the rules as declared (ids, descriptions, conditions, enforcement, approvers). */
  digest: string;
}

/** One rules document: the stack's `policies:` value or a rules file's root. */
interface Section {
  src: SourceDocument;
  root: DocPath;
  value: unknown;
}

/** The rules files CONVERGE_POLICY names (separated as PATH is), then `given` (--policy), each once. */
export function policyFilesOf(env: NodeJS.ProcessEnv = process.env, given: readonly string[] = []): string[] {
  const files = (env.CONVERGE_POLICY ?? "").split(delimiter).filter((f) => f.trim() !== "");
  return [...new Set(files.concat(given))];
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_./-]*$/;
const RULE_KEYS = ["id", "description", "condition", "enforcement", "approvers"];

/** The rule set of a stack: its `policies:` section, then each file; undefined when there is none
 *  (no rule runs, and CEL's evaluator is not loaded). Problems are diagnostics in `diags`. */
export function loadRuleSet(
  stack: { source?: SourceDocument; policies?: unknown; lint?: Record<string, boolean> },
  files: readonly string[],
  diags: Diagnostic[],
): RuleSet | undefined {
  const sections: Section[] = [];
  if (stack.source && stack.policies !== undefined && stack.policies !== null)
    sections.push({ src: stack.source, root: ["policies"], value: stack.policies });
  for (const f of files) {
    const s = readRulesFile(f, diags);
    if (s) sections.push(s);
  }
  if (!sections.length) return undefined;
  const rules: Rule[] = [];
  const settings: BuiltinSettings = {};
  for (const s of sections) readSection(s, rules, settings, diags);
  const seen = new Map<string, Rule>();
  for (const r of rules) {
    const first = seen.get(r.id);
    if (first)
      diags.push(
        error(`rule id "${r.id}" is declared twice`, {
          file: r.file,
          line: r.line,
          column: r.column,
          detail: `First declared at ${first.file}:${first.line}:${first.column}.`,
        }),
      );
    seen.set(r.id, r);
  }
  for (const b of builtinRules(settings, stack.lint ?? {}, diags)) if (!seen.has(b.id)) rules.push(b);
  const declared = rules.map(({ id, description, condition, enforcement, approvers }) => ({
    id,
    description,
    condition,
    enforcement,
    approvers,
  }));
  return { rules, digest: `sha256:${createHash("sha256").update(canonicalJson(declared)).digest("hex")}` };
}

function readRulesFile(path: string, diags: Diagnostic[]): Section | undefined {
  let bytes: Buffer;
  try {
    bytes = readInputFile(path, "--policy", MAX_SOURCE_BYTES);
  } catch (e) {
    const detail = e instanceof InputFileError ? e.detail : undefined;
    const what = (e as NodeJS.ErrnoException).code === "ENOENT" ? "it does not exist" : (e as Error).message;
    diags.push(
      error(`cannot read the rules file ${path}: ${what}`, { code: "policy/file", ...(detail ? { detail } : {}) }),
    );
    return undefined;
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    diags.push(
      error(`rules file ${path} is not valid UTF-8`, {
        code: "policy/file",
        file: path,
        line: decoded.invalid.line,
        column: decoded.invalid.column,
      }),
    );
    return undefined;
  }
  const src = new SourceDocument(path, decoded.text);
  const bad = src.errors[0] ?? src.structureErrors[0];
  if (bad) {
    const { line, column } = src.positionAt("pos" in bad ? bad.pos[0] : bad.offset);
    diags.push(
      error(`rules file ${path}: ${"message" in bad ? bad.message.split("\n")[0] : bad.summary}`, {
        code: "policy/file",
        file: path,
        line,
        column,
      }),
    );
    return undefined;
  }
  return { src, root: [], value: src.toJS() };
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function readSection(s: Section, rules: Rule[], settings: BuiltinSettings, diags: Diagnostic[]): void {
  const at = (path: DocPath, summary: string, extra: { key?: boolean; offset?: number; detail?: string } = {}) =>
    diags.push({ ...errorAt(s.src, [...s.root, ...path], summary, extra), code: "policy/rule" });
  if (!isMap(s.value))
    return void at([], "a rules document is a mapping with `rules:` (a list) and `builtins:` (a mapping)");
  for (const k of Object.keys(s.value))
    if (k !== "rules" && k !== "builtins")
      at([k], `unknown key "${k}" in a rules document (it has rules and builtins)`, { key: true });
  const list = s.value.rules ?? [];
  if (!Array.isArray(list)) return void at(["rules"], "rules must be a list of rules");
  list.forEach((r: unknown, i) => {
    const rule = readRule(r, (path, summary, extra) => at(["rules", i, ...path], summary, extra));
    if (!rule) return;
    const pos = s.src.position([...s.root, "rules", i]);
    rules.push({ ...rule, file: s.src.file, line: pos.line, column: pos.column });
  });
  const builtins = s.value.builtins ?? {};
  if (!isMap(builtins)) return void at(["builtins"], "builtins must be a mapping of built-in rule ids to settings");
  for (const [id, v] of Object.entries(builtins)) {
    const pos = s.src.position([...s.root, "builtins", id], { key: true });
    settings[id] = { value: v, file: s.src.file, line: pos.line, column: pos.column };
  }
}

type At = (path: DocPath, summary: string, extra?: { key?: boolean; offset?: number; detail?: string }) => void;

function readRule(r: unknown, at: At): Omit<Rule, "file" | "line" | "column"> | undefined {
  if (!isMap(r)) return void at([], "a rule is a mapping with id, description, condition and enforcement");
  const before = { n: 0 };
  const fail: At = (p, m, e) => {
    before.n++;
    at(p, m, e);
  };
  for (const k of Object.keys(r))
    if (!RULE_KEYS.includes(k))
      fail([k], `unknown key "${k}" in a rule (it has ${RULE_KEYS.join(", ")})`, { key: true });
  const id = r.id;
  if (typeof id !== "string" || !ID.test(id))
    fail(["id"], "a rule's id must be a name of letters, digits, _ . / and -");
  if (typeof r.description !== "string") fail(["description"], "a rule needs a description (a string)");
  if (!ENFORCEMENTS.includes(r.enforcement as Enforcement))
    fail(["enforcement"], `a rule's enforcement is one of ${ENFORCEMENTS.join(", ")}`);
  const approvers = r.approvers ?? [];
  if (!Array.isArray(approvers) || approvers.some((a) => typeof a !== "string"))
    fail(["approvers"], "approvers must be a list of names (CONVERGE_ACTOR values)");
  else if (r.enforcement === "owner-approval" && approvers.length === 0)
    fail(["enforcement"], "an owner-approval rule needs approvers: the CONVERGE_ACTOR values that may approve it");
  if (typeof r.condition !== "string")
    return void fail(["condition"], "a rule needs a condition: a CEL expression, true when a change breaks the rule");
  const compiled = compileCondition(r.condition);
  if (isProblem(compiled))
    return void fail(["condition"], `rule ${String(id)}: ${compiled.message}`, { offset: compiled.offset });
  if (before.n) return undefined;
  return {
    id: id as string,
    description: r.description as string,
    condition: r.condition,
    enforcement: r.enforcement as Enforcement,
    approvers: approvers as string[],
    compiled,
  };
}
