// Policy lint: findings a security reviewer wants before a grant ships. Warnings unless Google
// would refuse the grant (then errors); `lint: { rule: false }` in the stack turns a rule off and
// --strict makes warnings errors.
import { type Diagnostic, error, warning } from "../diagnostics/diagnostic.js";
import { isPublicMember, memberKey } from "../iam/members.js";
import { isBasicRole } from "../iam/roles.js";
import { hasCall } from "./references.js";
import { functionCall } from "../language/functions.js";
import { hasInterpolation } from "../language/expressions.js";
import type { ResourceDecl, StackModel } from "./model.js";
import { stackPolicySizeErrors } from "./policy-size.js";
import { type DocPath, formatPath, type PathSegment, type SourceDocument } from "../yaml/source.js";
import { pushAll } from "../base/arrays.js";
import {
  type Finding,
  type LintRule,
  LINT_RULES,
  resourceFindings,
  type ResourceView,
  type Val,
} from "./lint-rules.js";

/** Rules whose findings Google would refuse: always errors. */
const ERROR_RULES: ReadonlySet<LintRule> = new Set(["conditional-basic-or-public", "invalid-condition"]);

/** A literal value at `base` + `at`, its path built only when a finding names it (most values
 *  have none: a stack of 10,000 resources built 30,000 paths for nothing). */
class LiteralVal implements Val {
  constructor(
    readonly value: string,
    private readonly base: DocPath,
    private readonly at: readonly PathSegment[],
  ) {}

  get path(): DocPath {
    return [...this.base, ...this.at];
  }
}

const ROLE_AT = ["role"] as const;
const MEMBER_AT = ["member"] as const;
const MEMBERS_AT = ["members"] as const;
const CONDITION_AT = ["condition"] as const;
const EXPRESSION_AT = ["condition", "expression"] as const;

const literal = (raw: unknown, base: DocPath, at: readonly PathSegment[]): Val | undefined =>
  typeof raw === "string" && !hasInterpolation(raw) ? new LiteralVal(raw, base, at) : undefined;

/** The literal values of a resource, or of one binding of a policy resource (at `base`), as
 *  written in the stack (interpolated ones are left to plan time). */
function literalView(name: string, p: Record<string, unknown>, base: DocPath): ResourceView {
  const members: Val[] = [];
  const list = p.members;
  if (Array.isArray(list)) {
    for (let i = 0; i < list.length; i++) {
      const v = literal(list[i], base, ["members", i]);
      if (v) members.push(v);
    }
  }
  const member = literal(p.member, base, MEMBER_AT);
  if (member) members.push(member);
  const view: ResourceView = { name, members };
  if (Array.isArray(list) && list.length === 0) view.emptyMembers = { value: "[]", path: [...base, ...MEMBERS_AT] };
  const role = literal(p.role, base, ROLE_AT);
  if (role) view.role = role;
  const cond = p.condition && typeof p.condition === "object" ? (p.condition as Record<string, unknown>) : undefined;
  if (cond) {
    const expression = literal(cond.expression, base, EXPRESSION_AT);
    view.condition = { path: [...base, ...CONDITION_AT], ...(expression ? { expression } : {}) };
  }
  return view;
}

/** The values of a resource (or of one binding of a policy resource, at `base`) after
 *  interpolation, each with the path and `${…}` text it came from. */
function resolvedView(
  name: string,
  raw: Record<string, unknown>,
  resolved: Record<string, unknown>,
  base: DocPath,
): ResourceView {
  const val = (rawValue: unknown, value: unknown, path: DocPath): Val | undefined =>
    typeof value === "string"
      ? {
          value,
          path,
          ...(typeof rawValue === "string" && hasInterpolation(rawValue)
            ? { from: rawValue }
            : hasCall(rawValue)
              ? { from: functionCall(rawValue)?.key ?? "a function call" }
              : {}),
        }
      : undefined;
  const members: Val[] = [];
  const list = resolved.members;
  if (Array.isArray(list)) {
    // A list written item by item keeps its items' paths; a list from one `${…}` shares its path.
    list.forEach((m, i) => {
      const v = Array.isArray(raw.members)
        ? val(raw.members[i], m, [...base, "members", i])
        : val(raw.members, m, [...base, "members"]);
      if (v) members.push(v);
    });
  }
  const member = val(raw.member, resolved.member, [...base, "member"]);
  if (member) members.push(member);
  const role = val(raw.role, resolved.role, [...base, "role"]);
  const cond =
    resolved.condition && typeof resolved.condition === "object"
      ? (resolved.condition as Record<string, unknown>)
      : undefined;
  let expression: Val | undefined;
  const rawCond = raw.condition;
  const wholeFrom = typeof rawCond === "string" && hasInterpolation(rawCond) ? rawCond : undefined;
  if (cond) {
    expression =
      rawCond && typeof rawCond === "object"
        ? val((rawCond as Record<string, unknown>).expression, cond.expression, [...base, "condition", "expression"])
        : val(rawCond, cond.expression, [...base, "condition"]);
  }
  const condition = cond
    ? {
        path: [...base, "condition"],
        ...(wholeFrom !== undefined ? { from: wholeFrom } : {}),
        ...(expression ? { expression } : {}),
      }
    : undefined;
  const emptyMembers =
    Array.isArray(list) && list.length === 0 ? val(raw.members, "[]", [...base, "members"]) : undefined;
  return {
    name,
    members,
    ...(emptyMembers ? { emptyMembers } : {}),
    ...(role ? { role } : {}),
    ...(condition ? { condition } : {}),
  };
}

const always = () => true;

/**
 * Whether no rule can find anything in a member on its own: printable ASCII (so no lookalike
 * character, and no punycode label: "xn--" counts as a maybe), not public, not deleted. This runs
 * for every member of a stack that has nothing to report.
 */
function plainMember(m: string): boolean {
  return !NOT_PRINTABLE_ASCII.test(m) && !m.includes("xn--") && !isPublicMember(m) && !m.startsWith("deleted:");
}
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** Whether two plain members (printable ASCII: plainMember) have the same member key. Members that
 *  differ in more than case (most pairs) never do: memberKey changes nothing else, and keeps an
 *  ASCII member's length; no key is made for them. */
const samePlainMember = (a: string, b: string): boolean =>
  a === b || (a.length === b.length && a.toLowerCase() === b.toLowerCase() && memberKey(a) === memberKey(b));

/** Whether two of `members` (the strings among them) have the same member key. */
function hasDuplicateMember(members: readonly unknown[]): boolean {
  if (members.length < 2) return false;
  if (members.length === 2) {
    const [a, b] = members;
    return typeof a === "string" && typeof b === "string" && samePlainMember(a, b);
  }
  const keys = new Set<string>();
  let strings = 0;
  for (const m of members) {
    if (typeof m !== "string") continue;
    strings++;
    keys.add(memberKey(m));
  }
  return keys.size < strings;
}

/**
 * Whether a rule could find something in a binding's or member resource's literal values: false
 * only when resourceFindings would find nothing (every string counts, literal or not, so the
 * answer errs towards yes). Most resources have no finding: they then need no view, no value
 * objects and no paths.
 */
export function mayHaveLiteralFindings(p: Record<string, unknown>): boolean {
  if (p.condition && typeof p.condition === "object") return true;
  if (typeof p.role === "string" && isBasicRole(p.role)) return true;
  const member = p.member;
  if (typeof member === "string" && !plainMember(member)) return true;
  const list = p.members;
  if (!Array.isArray(list)) return false;
  if (list.length === 0) return true;
  for (const m of list) if (typeof m === "string" && !plainMember(m)) return true;
  // (A member resource has no members list, a binding resource no member: one list to compare.)
  return typeof member === "string" ? hasDuplicateMember([member, ...list]) : hasDuplicateMember(list);
}

/** Whether a rule could find something in a resource's literal values (see mayHaveLiteralFindings). */
export function mayHaveFindings(p: Record<string, unknown>): boolean {
  if (!Array.isArray(p.bindings)) return mayHaveLiteralFindings(p);
  const bindings: unknown[] = p.bindings;
  // (A hole in the list is left to the views, as before.)
  for (let i = 0; i < bindings.length; i++)
    if (!(i in bindings) || mayHaveLiteralFindings(asObject(bindings[i]))) return true;
  return false;
}

/** The rules' findings in a resource's literal values (views built whatever they hold). */
export function literalFindings(r: ResourceDecl, now: Date): Finding[] {
  const out: Finding[] = [];
  for (const view of literalViews(r, r.properties)) {
    const found = resourceFindings(view, now, always);
    if (found.length) pushAll(out, found);
  }
  return out;
}

function findings(stack: StackModel, now: Date): Finding[] {
  const out: Finding[] = [];
  for (const r of stack.resources.values()) {
    if (!mayHaveFindings(r.properties)) continue;
    const found = literalFindings(r, now);
    if (found.length) pushAll(out, found);
  }
  return out;
}

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A binding or member resource is one view; a policy resource one per binding. */
function literalViews(r: ResourceDecl, p: Record<string, unknown>): ResourceView[] {
  const base = ["resources", r.decl, "properties"];
  if (!Array.isArray(p.bindings)) return [literalView(r.name, p, base)];
  return p.bindings.map((b, i) => literalView(r.name, asObject(b), [...base, "bindings", i]));
}

function resolvedViews(
  r: ResourceDecl,
  raw: Record<string, unknown>,
  resolved: Record<string, unknown>,
): ResourceView[] {
  const name = r.name;
  const base = ["resources", r.decl, "properties"];
  if (!Array.isArray(resolved.bindings)) return [resolvedView(name, raw, resolved, base)];
  // Bindings written one by one keep their paths; a list from one `${…}` shares its path.
  return resolved.bindings.map((b, i) =>
    Array.isArray(raw.bindings)
      ? resolvedView(name, asObject(raw.bindings[i]), asObject(b), [...base, "bindings", i])
      : resolvedView(name, Object.fromEntries(Object.keys(asObject(b)).map((k) => [k, raw.bindings])), asObject(b), [
          ...base,
          "bindings",
        ]),
  );
}

function toDiagnostic(stack: StackModel, f: Finding, strict: boolean | undefined): Diagnostic | undefined {
  if (stack.lint[f.rule] === false && !ERROR_RULES.has(f.rule)) return undefined;
  const src: SourceDocument = stack.source;
  const pos = src.position(f.path, f.offset !== undefined ? { offset: f.offset } : {});
  const make = ERROR_RULES.has(f.rule) || strict ? error : warning;
  return make(f.summary, {
    file: src.file,
    line: pos.line,
    column: pos.column,
    path: formatPath(f.path),
    code: lintCode(f.rule),
    ...(f.detail ? { detail: `${f.detail} [lint: ${f.rule}]` } : { detail: `[lint: ${f.rule}]` }),
    address: f.address ?? String(f.path[1]),
  });
}

/**
 * Lint of one resource's values once `${…}` is resolved (plan time): only findings that involve a
 * resolved value, since the literal ones were reported when the stack loaded. A variable or a data
 * source output cannot slip allUsers or a basic role past review.
 */
export function lintResolved(
  stack: StackModel,
  r: ResourceDecl,
  resolved: Record<string, unknown>,
  opts: { strict?: boolean; now?: Date } = {},
): Diagnostic[] {
  const raw = r.properties;
  const found = resolvedViews(r, raw, resolved).flatMap((view) =>
    resourceFindings(view, opts.now ?? new Date(), (vals) => vals.some((v) => v?.from !== undefined)),
  );
  return found.map((f) => toDiagnostic(stack, f, opts.strict)).filter((d): d is Diagnostic => d !== undefined);
}

const LINT_CODE_PREFIX = "lint/";

/** The diagnostic code of a rule's findings: `lint/<rule>`. */
export function lintCode(rule: LintRule): string {
  return `${LINT_CODE_PREFIX}${rule}`;
}

/** Whether a diagnostic is a lint finding: decided by its code, never by its text. */
export function isLintDiagnostic(d: Diagnostic): boolean {
  return d.code?.startsWith(LINT_CODE_PREFIX) ?? false;
}

/** Lint diagnostics for a loaded stack, positioned in its source. */
export function lintStack(stack: StackModel, opts: { strict?: boolean; now?: Date } = {}): Diagnostic[] {
  const src: SourceDocument = stack.source;
  const diags: Diagnostic[] = [];
  for (const [rule, on] of Object.entries(stack.lint)) {
    if (!Object.hasOwn(LINT_RULES, rule)) {
      const pos = src.position(["lint", rule], { key: true });
      diags.push(
        error(`lint: unknown rule "${rule}"`, {
          file: src.file,
          ...pos,
          path: `lint.${rule}`,
          detail: `Rules: ${Object.keys(LINT_RULES).join(", ")}.`,
        }),
      );
    } else if (on === false && ERROR_RULES.has(rule as LintRule)) {
      const pos = src.position(["lint", rule], { key: true });
      diags.push(
        warning(`lint: "${rule}" finds grants Google refuses; it cannot be turned off`, {
          file: src.file,
          ...pos,
          path: `lint.${rule}`,
        }),
      );
    }
  }
  for (const f of findings(stack, opts.now ?? new Date())) {
    const d = toDiagnostic(stack, f, opts.strict);
    if (d) diags.push(d);
  }
  // Values resolved from inputs when the stack loaded, linted as the plan lints resolved values.
  for (const r of stack.resources.values())
    if (r.loadTimeProperties) pushAll(diags, lintResolved(stack, r, r.loadTimeProperties, opts));
  // Not a lint rule (it cannot be turned off): Google refuses such a policy.
  pushAll(diags, stackPolicySizeErrors(stack));
  return diags;
}
