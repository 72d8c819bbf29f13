// What a rule sees of one access change (docs/guardrails.md lists the variables), and its form
// for the evaluator: objects become CEL maps, dates timestamps.
import type { AccessChange, Condition, GuardrailPolicy, Lookalike, Policy } from "../generated/schemas.js";
import { celLibrary } from "./cel.js";

export interface RuleValues {
  change: "grant" | "revoke" | "condition-change";
  member: { id: string; type: string; email: string; domain: string };
  role: string;
  object: { kind: string; name: string; project: string; location: string };
  condition: { title?: string; description?: string; expression?: string; expires?: Date };
  resource: string;
  resources: string[];
  stack: string;
  workspace: string;
  policy: PolicyValues;
  /** Every policy of the stack (each the plan read) after apply, with its object. */
  policies: (PolicyValues & { object: RuleValues["object"] })[];
  /** Why the member may look like another principal; empty lists when it does not. */
  lookalike: { reasons: string[]; looks_like: string[] };
  now: Date;
}

export interface PolicyValues {
  members: string[];
  roles: Record<string, string[]>;
  bindings: { role: string; members: string[]; condition?: Condition }[];
}

/** Objects already converted (the policies every change of a plan shares are converted once). */
const converted = new WeakMap<object, unknown>();

/** `values` as the evaluator takes them. */
export function toCel(values: RuleValues): Record<string, unknown> {
  const { wkt } = celLibrary();
  const conv = (v: unknown): unknown => {
    if (!v || typeof v !== "object") return v;
    if (converted.has(v)) return converted.get(v);
    let out: unknown;
    if (v instanceof Date) out = wkt.timestampFromDate(v);
    else if (Array.isArray(v)) out = v.map(conv);
    else {
      const m = new Map<string, unknown>();
      for (const [k, x] of Object.entries(v)) if (x !== undefined) m.set(k, conv(x));
      out = m;
    }
    converted.set(v, out);
    return out;
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) out[k] = conv(v);
  return out;
}

/** A principal's parts: `user:ana@example.com` is type user, email ana@example.com, domain
 *  example.com; `deleted:user:…` has type deleted:user; allUsers has no email and no domain. */
export function memberOf(id: string): RuleValues["member"] {
  const deleted = id.startsWith("deleted:") ? "deleted:" : "";
  const rest = id.slice(deleted.length);
  const colon = rest.indexOf(":");
  if (rest.startsWith("principal://") || rest.startsWith("principalSet://")) {
    return { id, type: deleted + rest.slice(0, rest.indexOf(":")), email: "", domain: "" };
  }
  if (colon < 0) return { id, type: deleted + rest, email: "", domain: "" };
  const type = rest.slice(0, colon);
  const value = rest.slice(colon + 1).replace(/\?uid=\d+$/, "");
  if (type === "domain") return { id, type: deleted + type, email: "", domain: value.toLowerCase() };
  const at = value.lastIndexOf("@");
  return { id, type: deleted + type, email: value, domain: at < 0 ? "" : value.slice(at + 1).toLowerCase() };
}

/** The end of a `request.time < timestamp("…")` bound in the expression, if it has one. */
export function expiryOf(expression: string | undefined): Date | undefined {
  const m = expression ? /request\.time\s*<=?\s*timestamp\(\s*["']([^"']+)["']\s*\)/.exec(expression) : null;
  const t = m ? Date.parse(m[1]!) : NaN;
  return Number.isNaN(t) ? undefined : new Date(t);
}

export function conditionOf(c: Condition | undefined): RuleValues["condition"] {
  if (!c) return {};
  const expires = expiryOf(c.expression);
  return {
    title: c.title,
    ...(c.description !== undefined ? { description: c.description } : {}),
    expression: c.expression,
    ...(expires ? { expires } : {}),
  };
}

export function objectOf(kind: string, name: string): RuleValues["object"] {
  return {
    kind,
    name,
    project: /(?:^|\/)projects\/([^/]+)/.exec(name)?.[1] ?? "",
    location: /(?:^|\/)locations\/([^/]+)/.exec(name)?.[1] ?? "",
  };
}

/** The policy after apply, as rules see it: its principals, the principals of each role (any
 *  condition), and its bindings. */
export function policyOf(p: Pick<Policy, "bindings">): PolicyValues {
  const roles: Record<string, string[]> = {};
  const all = new Set<string>();
  const bindings: PolicyValues["bindings"] = [];
  for (const b of p.bindings ?? []) {
    const list = (roles[b.role] ??= []);
    for (const m of b.members) {
      if (!list.includes(m)) list.push(m);
      all.add(m);
    }
    bindings.push({ role: b.role, members: b.members, ...(b.condition ? { condition: b.condition } : {}) });
  }
  return { members: [...all].sort(), roles, bindings };
}

/** The policies of the stack as rules see them: each policy's values with its object. */
export function stackPoliciesOf(policies: readonly GuardrailPolicy[]): RuleValues["policies"] {
  return policies.map((p) => ({ ...policyOf(p), object: objectOf(p.kind, p.name) }));
}

/** What rules see of the plan as a whole. */
export interface PlanValues {
  stack: string;
  workspace: string;
  now: Date;
  policies: RuleValues["policies"];
}

const NOT_LOOKALIKE = { reasons: [], looks_like: [] };

/** The values of `c`, one access change; `lookalike` what the plan found of its principal. */
export function valuesOf(
  c: AccessChange,
  change: RuleValues["change"],
  policy: PolicyValues,
  where: PlanValues,
  lookalike?: Lookalike,
): RuleValues {
  return {
    change,
    member: memberOf(c.principal),
    role: c.role,
    object: objectOf(c.kind, c.object),
    condition: conditionOf(c.condition),
    resource: c.addresses[0] ?? "",
    resources: c.addresses,
    stack: where.stack,
    workspace: where.workspace,
    policy,
    policies: where.policies,
    lookalike: lookalike ? { reasons: lookalike.reasons, looks_like: lookalike.looks_like ?? [] } : NOT_LOOKALIKE,
    now: where.now,
  };
}

/** Values of every type a variable has, for the check at load. */
export function sampleValues(): RuleValues[] {
  const now = new Date(0);
  const policy = policyOf({ bindings: [{ role: "roles/viewer", members: ["user:ana@example.com"] }] });
  const change: AccessChange = {
    object: "projects/p/locations/l/restorePlans/r",
    kind: "restorePlan",
    principal: "user:ana@example.com",
    role: "roles/viewer",
    action: "grant",
    addresses: ["a.b"],
  };
  const cond = { title: "t", expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' };
  const policies = stackPoliciesOf([{ kind: "restorePlan", name: change.object, bindings: policy.bindings }]);
  const where = { stack: "s", workspace: "default", now, policies };
  const look = { principal: change.principal, reasons: ["r"], code_points: [], looks_like: ["user:x@example.com"] };
  return [
    valuesOf({ ...change, condition: cond }, "grant", policy, where, look),
    valuesOf(change, "revoke", policy, where),
  ];
}
