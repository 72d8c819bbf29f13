// Policy lint: findings a security reviewer wants before a grant ships. Warnings unless Google
// would refuse the grant (then errors); `lint: { rule: false }` in the stack turns a rule off and
// --strict makes warnings errors.
import { parse as parseCel } from "@bufbuild/cel";
import { type Diagnostic, error, warning } from "../diagnostics/diagnostic.js";
import { isPublicMember, memberKey } from "../iam/members.js";
import { isBasicRole } from "../iam/roles.js";
import { hasInterpolation } from "./expressions.js";
import type { StackModel } from "./model.js";
import { type DocPath, formatPath, type SourceDocument } from "./source.js";

export const LINT_RULES = {
  "public-principal": "allUsers or allAuthenticatedUsers is granted a role",
  "basic-role": "a basic role (roles/owner, roles/editor, roles/viewer) is granted",
  "conditional-basic-or-public": "a condition on a basic role or a public principal (Google refuses it)",
  "invalid-condition": "a condition expression that is not valid CEL, or uses unknown attributes",
  "expired-condition": "a time condition that has already expired",
  "deleted-principal": "a deleted: principal is granted a role",
  "duplicate-member": "the same member is listed twice in one binding",
} as const;

export type LintRule = keyof typeof LINT_RULES;

/** Rules whose findings Google would refuse: always errors. */
const ERROR_RULES: ReadonlySet<LintRule> = new Set(["conditional-basic-or-public", "invalid-condition"]);

/** Attributes IAM conditions may use (the CEL roots Google accepts). */
const CEL_ROOTS = new Set(["request", "resource", "api", "destination", "origin", "true", "false", "null"]);

interface Finding {
  rule: LintRule;
  path: DocPath;
  summary: string;
  detail?: string;
  offset?: number;
}

/** Root identifiers of a parsed CEL expression, minus comprehension variables. */
function celIdentifiers(node: unknown, out: Set<string>, locals: Set<string>): void {
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const n of node) celIdentifiers(n, out, locals);
    return;
  }
  const o = node as Record<string, unknown>;
  const kind = o.exprKind as { case?: string; value?: Record<string, unknown> } | undefined;
  if (kind?.case === "identExpr") {
    const name = String(kind.value?.name ?? "");
    if (!locals.has(name)) out.add(name);
    return;
  }
  if (kind?.case === "comprehensionExpr" && kind.value) {
    const inner = new Set(locals);
    for (const k of ["iterVar", "iterVar2", "accuVar"]) if (typeof kind.value[k] === "string" && kind.value[k]) inner.add(kind.value[k] as string);
    celIdentifiers(kind.value.iterRange, out, locals);
    for (const k of ["accuInit", "loopCondition", "loopStep", "result"]) celIdentifiers(kind.value[k], out, inner);
    return;
  }
  for (const [k, v] of Object.entries(o)) if (k !== "sourceInfo" && k !== "$typeName") celIdentifiers(v, out, locals);
}

/** Checks one condition expression; returns findings with offsets inside the expression. */
export function lintExpression(expression: string, now: Date): Omit<Finding, "path">[] {
  const out: Omit<Finding, "path">[] = [];
  let ast: unknown;
  try {
    ast = parseCel(expression);
  } catch (e) {
    const m = /<input>:(\d+):(\d+): (.*)$/s.exec((e as Error).message);
    const col = m ? Number(m[2]) : 1;
    out.push({ rule: "invalid-condition", summary: `condition expression is not valid CEL: ${m ? m[3] : (e as Error).message}`, offset: m && m[1] === "1" ? col - 1 : 0 });
    return out;
  }
  const ids = new Set<string>();
  celIdentifiers((ast as { expr: unknown }).expr, ids, new Set());
  for (const id of ids) {
    if (!CEL_ROOTS.has(id)) out.push({ rule: "invalid-condition", summary: `condition uses unknown attribute "${id}"`, detail: "IAM conditions can use request.*, resource.*, api.*, destination.* and origin.*.", offset: Math.max(0, expression.indexOf(id)) });
  }
  const re = /request\.time\s*(<=?)\s*timestamp\(\s*["']([^"']+)["']\s*\)/g;
  for (let m = re.exec(expression); m; m = re.exec(expression)) {
    const t = Date.parse(m[2]!);
    if (Number.isNaN(t)) out.push({ rule: "invalid-condition", summary: `"${m[2]}" is not an RFC 3339 timestamp`, offset: m.index });
    else if (t <= now.getTime()) out.push({ rule: "expired-condition", summary: `condition expired on ${new Date(t).toISOString()}: the grant no longer gives access`, offset: m.index, detail: "Remove the grant, or extend the condition." });
  }
  return out;
}

function findings(stack: StackModel, now: Date): Finding[] {
  const out: Finding[] = [];
  for (const r of stack.resources.values()) {
    const base = ["resources", r.name, "properties"];
    const p = r.properties;
    const role = typeof p.role === "string" && !hasInterpolation(p.role) ? p.role : undefined;
    const members: { m: string; path: DocPath }[] = [];
    if (Array.isArray(p.members)) p.members.forEach((m, i) => typeof m === "string" && !hasInterpolation(m) && members.push({ m, path: [...base, "members", i] }));
    if (typeof p.member === "string" && !hasInterpolation(p.member)) members.push({ m: p.member, path: [...base, "member"] });
    const cond = p.condition && typeof p.condition === "object" ? (p.condition as Record<string, unknown>) : undefined;
    for (const { m, path } of members) {
      if (isPublicMember(m)) out.push({ rule: "public-principal", path, summary: `${r.name}: ${m} makes this grant public`, detail: `Anyone${m === "allAuthenticatedUsers" ? " with a Google account" : " on the internet"} gets ${role ?? "the role"}.` });
      if (m.startsWith("deleted:")) out.push({ rule: "deleted-principal", path, summary: `${r.name}: ${m} is a deleted principal`, detail: "It grants nothing; remove it from the stack." });
    }
    if (role && isBasicRole(role)) out.push({ rule: "basic-role", path: [...base, "role"], summary: `${r.name}: ${role} is a basic role`, detail: "Basic roles grant thousands of permissions; prefer a predefined or custom role." });
    if (cond) {
      if (role && isBasicRole(role)) out.push({ rule: "conditional-basic-or-public", path: [...base, "condition"], summary: `${r.name}: a condition cannot be set on the basic role ${role}`, detail: "Google refuses conditional bindings of basic roles." });
      const pub = members.find(({ m }) => isPublicMember(m));
      if (pub) out.push({ rule: "conditional-basic-or-public", path: [...base, "condition"], summary: `${r.name}: a condition cannot apply to ${pub.m}`, detail: "Google refuses conditions on bindings that include allUsers or allAuthenticatedUsers." });
      if (typeof cond.expression === "string" && !hasInterpolation(cond.expression)) {
        for (const f of lintExpression(cond.expression, now)) out.push({ ...f, path: [...base, "condition", "expression"], summary: `${r.name}: ${f.summary}` });
      }
    }
    const seen = new Map<string, string>();
    for (const { m, path } of members) {
      const k = memberKey(m);
      if (seen.has(k)) out.push({ rule: "duplicate-member", path, summary: `${r.name}: ${m} is listed twice (also as ${seen.get(k)})` });
      else seen.set(k, m);
    }
  }
  return out;
}

/** Lint diagnostics for a loaded stack, positioned in its source. */
export function lintStack(stack: StackModel, opts: { strict?: boolean; now?: Date } = {}): Diagnostic[] {
  const src: SourceDocument = stack.source;
  const diags: Diagnostic[] = [];
  for (const [rule, on] of Object.entries(stack.lint)) {
    if (!(rule in LINT_RULES)) {
      const pos = src.position(["lint", rule], { key: true });
      diags.push(error(`lint: unknown rule "${rule}"`, { file: src.file, ...pos, path: `lint.${rule}`, detail: `Rules: ${Object.keys(LINT_RULES).join(", ")}.` }));
    } else if (on === false && ERROR_RULES.has(rule as LintRule)) {
      const pos = src.position(["lint", rule], { key: true });
      diags.push(warning(`lint: "${rule}" finds grants Google refuses; it cannot be turned off`, { file: src.file, ...pos, path: `lint.${rule}` }));
    }
  }
  for (const f of findings(stack, opts.now ?? new Date())) {
    if (stack.lint[f.rule] === false && !ERROR_RULES.has(f.rule)) continue;
    const pos = src.position(f.path, f.offset !== undefined ? { offset: f.offset } : {});
    const make = ERROR_RULES.has(f.rule) || opts.strict ? error : warning;
    diags.push(make(f.summary, { file: src.file, line: pos.line, column: pos.column, path: formatPath(f.path), ...(f.detail ? { detail: `${f.detail} [lint: ${f.rule}]` } : { detail: `[lint: ${f.rule}]` }), address: String(f.path[1]) }));
  }
  return diags;
}
