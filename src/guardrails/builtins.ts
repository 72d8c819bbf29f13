// The built-in rules: CEL conditions like any rule, written here from their settings. On (advisory)
// by default wherever rules are in use; those that need a list (domains, roles, principals, pairs)
// are on once it is given. `builtins: { ID: off | advisory | mandatory | owner-approval }` or a
// mapping with `enforcement`, `approvers` and the rule's own settings; `lint: { ID: false }` in the
// stack turns off the built-in of the same name too.
import { suggest } from "../diagnostics/did-you-mean.js";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { compileCondition, isProblem } from "./compile.js";
import type { Enforcement, Rule } from "./rule.js";

export type BuiltinSettings = Record<string, { value: unknown; file: string; line: number; column: number }>;

type Config = Record<string, unknown>;
interface Builtin {
  description: string | ((c: Config) => string);
  /** The settings it needs (lists of strings, or for max_days a number); none: on by default. */
  needs?: Record<string, "strings" | "pairs" | "number">;
  /** Settings it may be given, each one of a few words (the first is the default). */
  choices?: Record<string, readonly string[]>;
  condition(c: Config): string;
}

const NOT_REVOKE = "change != 'revoke'";
const list = (v: unknown) => JSON.stringify(v);
/** 90 % of Google's 1,500 principals in one policy. */
const POLICY_SIZE_WARN = 1350;

const BUILTINS: Record<string, Builtin> = {
  "public-principal": {
    description: "allUsers or allAuthenticatedUsers gains a role",
    condition: () => `${NOT_REVOKE} && member.type in ['allUsers', 'allAuthenticatedUsers']`,
  },
  "basic-role": {
    description: "a basic role (roles/owner, roles/editor, roles/viewer) is granted",
    condition: () => `${NOT_REVOKE} && role in ['roles/owner', 'roles/editor', 'roles/viewer']`,
  },
  "allowed-domains": {
    description: "a member from outside the allowed domains gains a role",
    needs: { domains: "strings" },
    condition: (c) =>
      `${NOT_REVOKE} && member.domain != '' && ` +
      `!${list(c.domains)}.exists(d, member.domain == d || member.domain.endsWith('.' + d))`,
  },
  "privileged-expiry": {
    description: "a privileged role is granted without a condition that expires within the allowed days",
    needs: { roles: "strings", max_days: "number" },
    condition: (c) =>
      `${NOT_REVOKE} && role in ${list(c.roles)} && ` +
      `(!has(condition.expires) || condition.expires > now + duration('${Number(c.max_days) * 24}h'))`,
  },
  "protected-principals": {
    description: "a protected principal loses a role",
    needs: { principals: "strings" },
    condition: (c) => `change == 'revoke' && member.id in ${list(c.principals)}`,
  },
  "deleted-principal": {
    description: "the policy keeps a deleted: principal",
    condition: () => "policy.members.exists(m, m.startsWith('deleted:'))",
  },
  "policy-size": {
    description: `the policy holds more than ${POLICY_SIZE_WARN} principals (90 % of Google's limit of 1,500)`,
    condition: () => `size(policy.members) > ${POLICY_SIZE_WARN}`,
  },
  "separation-of-duties": {
    description: (c) =>
      c.scope === "stack"
        ? "one principal holds both roles of a separated pair across the stack's objects"
        : "one principal holds both roles of a separated pair on one object",
    needs: { pairs: "pairs" },
    choices: { scope: ["object", "stack"] },
    condition: (c) => {
      // Whether the member holds role R: on this object, or on any object of the stack.
      const holds = (r: string) =>
        c.scope === "stack"
          ? `policies.exists(q, ${r} in q.roles && member.id in q.roles[${r}])`
          : `(${r} in policy.roles && member.id in policy.roles[${r}])`;
      const either = `(role == p[0] && ${holds("p[1]")}) || (role == p[1] && ${holds("p[0]")})`;
      return `${NOT_REVOKE} && ${list(c.pairs)}.exists(p, ${either})`;
    },
  },
  "lookalike-principal": {
    description:
      "a principal that may look like another gains a role (characters beyond ASCII, mixed scripts, " +
      "invisible characters, or confusable with another principal of the plan or its policies)",
    condition: () => `${NOT_REVOKE} && (size(lookalike.reasons) > 0 || size(lookalike.looks_like) > 0)`,
  },
};

const SHAPES = { number: "a positive number", pairs: "a list of pairs of roles", strings: "a list of strings" };

const KINDS: Record<string, (v: unknown) => boolean> = {
  strings: (v) => Array.isArray(v) && v.every((x) => typeof x === "string"),
  pairs: (v) =>
    Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === "string")),
  number: (v) => typeof v === "number" && v > 0,
};

/** The built-in rules as `settings` and the stack's `lint:` leave them. */
export function builtinRules(settings: BuiltinSettings, lint: Record<string, boolean>, diags: Diagnostic[]): Rule[] {
  const out: Rule[] = [];
  for (const id of Object.keys(settings))
    if (!Object.hasOwn(BUILTINS, id))
      diags.push(
        error(`unknown built-in rule "${id}"`, {
          ...where(settings[id]!),
          code: "policy/rule",
          detail: `The built-in rules: ${Object.keys(BUILTINS).join(", ")}.`,
        }),
      );
  for (const [id, b] of Object.entries(BUILTINS)) {
    const s = settings[id];
    const c: Config =
      s === undefined || s.value === true
        ? {}
        : typeof s.value === "string"
          ? { enforcement: s.value }
          : s.value === false
            ? { enforcement: "off" }
            : (s.value as Config);
    if (lint[id] === false || c.enforcement === "off") continue;
    const enforcement = (c.enforcement ?? "advisory") as Enforcement | string;
    const bad = (m: string) =>
      diags.push(error(`built-in rule ${id}: ${m}`, { ...(s ? where(s) : {}), code: "policy/rule" }));
    const problem = settingsProblem(b, c, enforcement, s !== undefined);
    if (problem === null) continue;
    if (problem) {
      bad(problem);
      continue;
    }
    const approvers = Array.isArray(c.approvers) ? (c.approvers as string[]) : [];
    const condition = b.condition(c);
    const compiled = compileCondition(condition);
    if (isProblem(compiled)) throw new Error(`built-in rule ${id} does not compile: ${compiled.message}`);
    out.push({
      id,
      description: typeof b.description === "string" ? b.description : b.description(c),
      condition,
      enforcement: enforcement as Enforcement,
      approvers,
      builtin: true,
      compiled,
      ...(s ? where(s) : {}),
    });
  }
  return out;
}

/** What is wrong with a built-in rule's settings ("" when nothing; null: a rule that needs settings
 *  and was not given any is off, as by default). */
function settingsProblem(b: Builtin, c: Config, enforcement: string, given: boolean): string | null {
  if (typeof c !== "object" || c === null || Array.isArray(c))
    return "its setting is off, advisory, mandatory, owner-approval or a mapping";
  if (!["advisory", "mandatory", "owner-approval"].includes(enforcement))
    return "enforcement is one of off, advisory, mandatory, owner-approval";
  const known = ["enforcement", "approvers", ...Object.keys(b.needs ?? {}), ...Object.keys(b.choices ?? {})];
  const unknown = Object.keys(c).find((k) => !known.includes(k));
  if (unknown !== undefined) {
    const guess = suggest(unknown, known);
    return `unknown setting "${unknown}"${guess ? ` (did you mean "${guess}"?)` : ""}`;
  }
  const needs = Object.entries(b.needs ?? {});
  const missing = needs.find(([k]) => c[k] === undefined);
  if (missing) return given ? `needs ${missing[0]} (${SHAPES[missing[1]]})` : null;
  const wrong = needs.find(([k, kind]) => !KINDS[kind]!(c[k]));
  if (wrong) return `${wrong[0]} must be ${SHAPES[wrong[1]]}`;
  const choice = Object.entries(b.choices ?? {}).find(
    ([k, words]) => c[k] !== undefined && !words.includes(c[k] as string),
  );
  if (choice) return `${choice[0]} is one of ${choice[1].join(", ")}`;
  if (enforcement === "owner-approval" && !(Array.isArray(c.approvers) && c.approvers.length))
    return "an owner-approval rule needs approvers";
  return "";
}

const where = (s: { file: string; line: number; column: number }) => ({ file: s.file, line: s.line, column: s.column });
