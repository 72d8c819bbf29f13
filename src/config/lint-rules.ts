// The lint rules and what they look at: each rule's finding on one resource's values (literal at
// load, resolved at plan time). ./lint.ts builds the views and turns findings into diagnostics.
import { checkCondition } from "../iam/condition-check.js";
import { isPublicMember, memberKey } from "../iam/members.js";
import { isBasicRole } from "../iam/roles.js";
import { codePoints, suspectReasons } from "../iam/lookalike.js";
import type { DocPath } from "../yaml/source.js";

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

export interface Finding {
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
export interface Val {
  value: string;
  path: DocPath;
  /** The interpolation it was resolved from; undefined for a literal. */
  from?: string;
}

/** What the rules see of one resource: literal values when the stack loads, resolved values at plan time. */
export interface ResourceView {
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
export function resourceFindings(
  v: ResourceView,
  now: Date,
  report: (vals: (Val | undefined)[]) => boolean,
): Finding[] {
  const out: Finding[] = [];
  const add: Add = (vals, f) => {
    if (!report(vals)) return;
    const note = fromNote(vals);
    out.push({
      ...f,
      address: v.name,
      ...(f.detail !== undefined || note ? { detail: `${f.detail ?? ""}${note}`.trim() } : {}),
    });
  };
  memberFindings(v, add);
  if (v.role && isBasicRole(v.role.value))
    add([v.role], {
      rule: "basic-role",
      path: v.role.path,
      summary: `${v.name}: ${v.role.value} is a basic role`,
      detail: "Basic roles grant thousands of permissions; prefer a predefined or custom role.",
    });
  if (v.condition) conditionFindings(v, v.condition, now, add);
  if (v.emptyMembers)
    add([v.emptyMembers], {
      rule: "empty-binding",
      path: v.emptyMembers.path,
      summary: `${v.name}: members is empty: this binding removes every member of ${v.role?.value ?? "its role"}`,
      detail: "Everyone who holds the role on this object loses it, including grants made outside converge.",
    });
  if (v.members.length >= 2) duplicateFindings(v, add);
  return out;
}

type Add = (vals: (Val | undefined)[], f: Finding) => void;

/** Public, lookalike and deleted principals. */
function memberFindings(v: ResourceView, add: Add): void {
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
}

/** A condition Google refuses on the binding, or refuses, or that has expired. */
function conditionFindings(v: ResourceView, c: NonNullable<ResourceView["condition"]>, now: Date, add: Add): void {
  const at = c.path;
  const whole: Val | undefined = c.from !== undefined ? { value: "", path: at, from: c.from } : undefined;
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
  const expr = c.expression;
  if (!expr) return;
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

/** A member listed twice (by key) in one binding. */
function duplicateFindings(v: ResourceView, add: Add): void {
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
}

/** A member that may look like another, its characters spelled out when it is written in the
 *  stack (a resolved one may come from a secret, whose characters are not to be listed). */
function lookalikeFinding(name: string, m: Val, reasons: string[]): Finding {
  const summary = `${name}: ${m.value} may look like another principal (${reasons.join("; ")})`;
  if (m.from !== undefined) return { rule: "lookalike-principal", path: m.path, summary };
  const detail = `Its characters beyond ASCII: ${codePoints(m.value).join(", ")}.`;
  return { rule: "lookalike-principal", path: m.path, summary, detail };
}
