// Policy lint: findings a security reviewer wants before a grant ships. Warnings unless Google
// would refuse the grant (then errors); `lint: { rule: false }` in the stack turns a rule off and
// --strict makes warnings errors.
import { type Diagnostic, error, warning } from "../diagnostics/diagnostic.js";
import { checkCondition } from "../iam/condition-check.js";
import { isPublicMember, memberKey } from "../iam/members.js";
import { isBasicRole } from "../iam/roles.js";
import { codePoints, suspectReasons } from "../iam/lookalike.js";
import { hasCall } from "./references.js";
import { functionCall } from "../language/functions.js";
import { hasInterpolation } from "../language/expressions.js";
import type { ResourceDecl, StackModel } from "./model.js";
import { stackPolicySizeErrors } from "./policy-size.js";
import { type DocPath, formatPath, type PathSegment, type SourceDocument } from "../yaml/source.js";
import { pushAll } from "../base/arrays.js";

export const LINT_RULES = {
  "public-principal": "allUsers or allAuthenticatedUsers is granted a role",
  "basic-role": "a basic role (roles/owner, roles/editor, roles/viewer) is granted",
  "conditional-basic-or-public": "a condition on a basic role or a public principal (Google refuses it)",
  "invalid-condition":
    "a condition expression Google refuses: not valid CEL, not boolean, or " +
    "using attributes or functions IAM does not have",
  "expired-condition": "a time condition that has already expired",
  "deleted-principal": "a deleted: principal is granted a role",
  "lookalike-principal":
    "a member that may look like another: beyond ASCII (punycode decoded), mixed scripts, invisible characters",
  "duplicate-member": "the same member is listed twice in one binding",
  "empty-binding": "a binding with `members: []` removes every member of its role",
} as const;

export type LintRule = keyof typeof LINT_RULES;

/** Rules whose findings Google would refuse: always errors. */
const ERROR_RULES: ReadonlySet<LintRule> = new Set(["conditional-basic-or-public", "invalid-condition"]);

interface Finding {
  rule: LintRule;
  path: DocPath;
  summary: string;
  detail?: string;
  offset?: number;
  /** The resource (or instance) it is about, when not the one named in the path */
  address?: string;
}

/** Checks one condition expression; returns findings with offsets inside the expression. */
export function lintExpression(expression: string, now: Date): Omit<Finding, "path">[] {
  const problem = checkCondition(expression);
  if (problem) {
    const detail = problem.neverGrants
      ? "Google accepts it, but the condition can never grant access."
      : "Google refuses it: IAM conditions use the attributes and functions of " +
        "https://cloud.google.com/iam/docs/conditions-attribute-reference.";
    return [{ rule: "invalid-condition", summary: problem.message, offset: problem.offset, detail }];
  }
  const out: Omit<Finding, "path">[] = [];
  const re = /request\.time\s*(<=?)\s*timestamp\(\s*["']([^"']+)["']\s*\)/g;
  for (let m = re.exec(expression); m; m = re.exec(expression)) {
    const t = Date.parse(m[2]!);
    if (t <= now.getTime())
      out.push({
        rule: "expired-condition",
        summary: `condition expired on ${new Date(t).toISOString()}: the grant no longer gives access`,
        offset: m.index,
        detail: "Remove the grant, or extend the condition.",
      });
  }
  return out;
}

/** A value a rule looks at: where it is in the stack, and the `${…}` text it came from, if any. */
interface Val {
  value: string;
  path: DocPath;
  /** The interpolation it was resolved from; undefined for a literal. */
  from?: string;
}

/** What the rules see of one resource: literal values when the stack loads, resolved values at plan time. */
interface ResourceView {
  name: string;
  role?: Val;
  members: Val[];
  /** Present when `members` is an empty list (the binding removes every member of its role). */
  emptyMembers?: Val;
  /** Present when the binding has a condition; `from` when the whole condition is one `${…}`. */
  condition?: { path: DocPath; from?: string; expression?: Val };
}

const fromNote = (vals: (Val | undefined)[]) => {
  const from = vals.find((v) => v?.from)?.from;
  return from ? ` The value comes from "${from}".` : "";
};

/** The rules on one resource. `report` says whether a finding over these values is news (at plan
 *  time only those involving a resolved value are: the literal ones were reported at load).
 *  A new rule must also be known to mayHaveLiteralFindings below, which lets load skip the
 *  resources none of these rules could flag (test/config/lint-quick-check.test.ts). */
function resourceFindings(v: ResourceView, now: Date, report: (vals: (Val | undefined)[]) => boolean): Finding[] {
  const out: Finding[] = [];
  const add = (vals: (Val | undefined)[], f: Finding) => {
    if (!report(vals)) return;
    const note = fromNote(vals);
    out.push({
      ...f,
      address: v.name,
      ...(f.detail !== undefined || note ? { detail: `${f.detail ?? ""}${note}`.trim() } : {}),
    });
  };
  const role = v.role?.value;
  for (const m of v.members) {
    if (isPublicMember(m.value))
      add([m], {
        rule: "public-principal",
        path: m.path,
        summary: `${v.name}: ${m.value} makes this grant public`,
        detail:
          `Anyone` +
          `${m.value === "allAuthenticatedUsers" ? " with a Google account" : " on the internet"}` +
          ` gets ${role ?? "the role"}.`,
      });
    const lookalike = suspectReasons(m.value);
    if (lookalike.length) add([m], lookalikeFinding(v.name, m, lookalike));
    if (m.value.startsWith("deleted:"))
      add([m], {
        rule: "deleted-principal",
        path: m.path,
        summary: `${v.name}: ${m.value} is a deleted principal`,
        detail: "It grants nothing; remove it from the stack.",
      });
  }
  if (v.role && isBasicRole(v.role.value))
    add([v.role], {
      rule: "basic-role",
      path: v.role.path,
      summary: `${v.name}: ${v.role.value} is a basic role`,
      detail: "Basic roles grant thousands of permissions; prefer a predefined or custom role.",
    });
  if (v.condition) {
    const at = v.condition.path;
    const whole: Val | undefined =
      v.condition.from !== undefined ? { value: "", path: at, from: v.condition.from } : undefined;
    if (v.role && isBasicRole(v.role.value))
      add([v.role, whole], {
        rule: "conditional-basic-or-public",
        path: at,
        summary: `${v.name}: a condition cannot be set on the basic role ${v.role.value}`,
        detail: "Google refuses conditional bindings of basic roles.",
      });
    const pub = v.members.find((m) => isPublicMember(m.value));
    if (pub)
      add([pub, whole], {
        rule: "conditional-basic-or-public",
        path: at,
        summary: `${v.name}: a condition cannot apply to ${pub.value}`,
        detail: "Google refuses conditions on bindings that include allUsers or allAuthenticatedUsers.",
      });
    const expr = v.condition.expression;
    if (expr) {
      // Offsets point into a literal expression; a resolved one is not in the file.
      for (const f of lintExpression(expr.value, now)) {
        const { offset, ...rest } = f;
        add([expr], {
          ...rest,
          path: expr.path,
          summary: `${v.name}: ${f.summary}`,
          ...(expr.from === undefined && offset !== undefined ? { offset } : {}),
        });
      }
    }
  }
  if (v.emptyMembers)
    add([v.emptyMembers], {
      rule: "empty-binding",
      path: v.emptyMembers.path,
      summary: `${v.name}: members is empty: this binding removes every member of ${role ?? "its role"}`,
      detail: "Everyone who holds the role on this object loses it, including grants made outside converge.",
    });
  if (v.members.length < 2) return out;
  const seen = new Map<string, Val>();
  for (const m of v.members) {
    const k = memberKey(m.value);
    const first = seen.get(k);
    if (first)
      add([first, m], {
        rule: "duplicate-member",
        path: m.path,
        summary: `${v.name}: ${m.value} is listed twice (also as ${first.value})`,
      });
    else seen.set(k, m);
  }
  return out;
}

/** A member that may look like another, its characters spelled out when it is written in the
 *  stack (a resolved one may come from a secret, whose characters are not to be listed). */
function lookalikeFinding(name: string, m: Val, reasons: string[]): Finding {
  const summary = `${name}: ${m.value} may look like another principal (${reasons.join("; ")})`;
  if (m.from !== undefined) return { rule: "lookalike-principal", path: m.path, summary };
  const detail = `Its characters beyond ASCII: ${codePoints(m.value).join(", ")}.`;
  return { rule: "lookalike-principal", path: m.path, summary, detail };
}

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

/** Whether two of the strings are the same member (by key). */
function hasDuplicateMember(strings: readonly string[]): boolean {
  if (strings.length < 2) return false;
  if (strings.length === 2) return memberKey(strings[0]!) === memberKey(strings[1]!);
  return new Set(strings.map(memberKey)).size < strings.length;
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
  const strings: string[] = [];
  const list = p.members;
  if (Array.isArray(list)) {
    if (list.length === 0) return true;
    for (const m of list) if (typeof m === "string") strings.push(m);
  }
  if (typeof p.member === "string") strings.push(p.member);
  for (const m of strings) if (isPublicMember(m) || m.startsWith("deleted:") || suspectReasons(m).length) return true;
  return hasDuplicateMember(strings);
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
