// The data the review page shows, from the plan alone (the same redacted plan data as every other
// view: a saved plan gives the same page). Strings are listed once and referred to by index, so a
// plan of 10,000 access changes stays a few hundred kilobytes and the page filters on numbers.
import { isAbsolute, relative, sep } from "node:path";
import type { AccessChange, Condition, Plan, ResourceChange } from "../../../generated/schemas.js";
import type { Diagnostic } from "../../../diagnostics/diagnostic.js";
import { planCounts } from "../../../contracts/actions.js";
import { bindingKey } from "../../../iam/conditions.js";
import { grantKey } from "../../../iam/policy-effect.js";
import { lookalikeText } from "../../../iam/lookalike.js";
import { expiryOf } from "../../../guardrails/values.js";
import { heldGrantsAfter } from "./held-grants.js";
import { revocationCause } from "./revocation-cause.js";

/** What a row of the matrix says of one grant. */
export const STATE = { unchanged: 0, added: 1, revoked: 2, reworded: 3 } as const;

/** [principal, role, object, condition (-1: none), state, first address (-1: none), before condition]. */
export type Row = [number, number, number, number, number, number, number];

export interface ReviewData {
  head: {
    stack: string;
    file: string;
    target: string;
    endpoint: string;
    made: string;
    digest: string;
    version: string;
    applyable: boolean;
    counts: ReturnType<typeof planCounts>;
    granted: number;
    revoked: number;
    reworded: number;
    unchanged: number;
    principals: number;
    objects: number;
    incomplete: string[];
  };
  guardrails: { rules: number; results: string[][] } | null;
  lint: { severity: string; where: string; summary: string; detail: string }[];
  lookalikes: [string, string][];
  /** [name, type]: type is one of TYPES. */
  principals: [string, number][];
  roles: string[];
  /** [object, kind] */
  objects: [string, string][];
  /** [title, description, expression, expiry ISO or ""] */
  conditions: [string, string, string, string][];
  addresses: string[];
  rows: Row[];
  /** [row, cause] for each revocation, in the plan's order. */
  revocations: [number, string][];
}

/** Principal types, in the order the matrix groups them. */
export const TYPES = ["users", "groups", "service accounts", "domains", "public", "workload identity sets", "other"];

export function principalType(p: string): number {
  const m = /^(?:deleted:)?([a-zA-Z]+)(:|$)/.exec(p);
  const t = m?.[1] ?? "";
  if (t === "user") return 0;
  if (t === "group") return 1;
  if (t === "serviceAccount") return 2;
  if (t === "domain") return 3;
  if (t === "allUsers" || t === "allAuthenticatedUsers") return 4;
  if (t === "principalSet" || t === "principal") return 5;
  return 6;
}

/** A table of distinct values, each given the index of its first appearance. */
class Table<T> {
  readonly list: T[] = [];
  private readonly index = new Map<string, number>();
  constructor(private readonly keyOf: (v: T) => string) {}
  of(v: T): number {
    const k = this.keyOf(v);
    let i = this.index.get(k);
    if (i === undefined) this.index.set(k, (i = this.list.push(v) - 1));
    return i;
  }
}

const grantOf = (object: string, role: string, c: Condition | undefined, member: string) =>
  `${object}\u0000${grantKey(bindingKey(role, c), member)}`;

/** The stack file as the page shows it: relative to the working directory when below it (a page
 *  passed around shows no home folder), else as the plan has it. */
function shownPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : file;
}

export function reviewData(plan: Plan, lint: readonly Diagnostic[]): ReviewData {
  const t = tables();
  const delta = plan.access_changes;
  const changes = delta?.changes ?? [];
  const byAddress = new Map(plan.resource_changes.map((c): [string, ResourceChange] => [c.address, c]));
  const rows: Row[] = [];
  const revocations: [number, string][] = [];
  const changed = new Set<string>();
  for (const c of changes) {
    changed.add(grantOf(c.object, c.role, c.condition, c.principal));
    const state = c.action === "grant" ? STATE.added : STATE.revoked;
    const row = t.row(c, state, c.addresses[0]);
    if (state === STATE.revoked) revocations.push([rows.length, revocationCause(c, byAddress, plan.options.destroy)]);
    rows.push(row);
  }
  for (const w of delta?.condition_changes ?? []) {
    for (const p of w.principals) {
      changed.add(grantOf(w.object, w.role, w.after, p));
      const grant = { object: w.object, kind: w.kind, principal: p, role: w.role, condition: w.after };
      const row = t.row(grant, STATE.reworded, w.addresses[0]);
      row[6] = t.condition(w.before);
      rows.push(row);
    }
  }
  let unchanged = 0;
  for (const g of heldGrantsAfter(plan.resource_changes)) {
    if (changed.has(grantOf(g.object, g.role, g.condition, g.principal))) continue;
    changed.add(grantOf(g.object, g.role, g.condition, g.principal));
    rows.push(t.row(g, STATE.unchanged, g.address));
    unchanged++;
  }
  const n = { granted: 0, revoked: 0 };
  for (const c of changes) n[c.action === "grant" ? "granted" : "revoked"]++;
  const touched = rows.filter((r) => r[4] !== STATE.unchanged);
  return {
    head: {
      stack: plan.stack.name,
      file: shownPath(plan.stack.file),
      target: plan.target ?? "",
      endpoint: plan.provider.endpoint,
      made: plan.timestamp,
      digest: plan.digest ?? "",
      version: plan.converge_version,
      applyable: plan.applyable,
      counts: planCounts(plan),
      granted: n.granted,
      revoked: n.revoked,
      unchanged,
      reworded: (delta?.condition_changes ?? []).reduce((s, w) => s + w.principals.length, 0),
      principals: new Set(touched.map((r) => r[0])).size,
      objects: new Set(touched.map((r) => r[2])).size,
      incomplete: delta?.incomplete ?? [],
    },
    guardrails: plan.guardrails ? guardrailData(plan.guardrails) : null,
    lint: lint.map((d) => ({
      severity: d.severity,
      summary: d.summary,
      detail: d.detail ?? "",
      where: d.file ? `${d.file.split("/").pop() ?? ""}:${d.line}:${d.column}` : "",
    })),
    lookalikes: (delta?.lookalikes ?? []).map((l): [string, string] => [l.principal, lookalikeText(l)]),
    principals: t.principals.list,
    roles: t.roles.list,
    objects: t.objects.list,
    conditions: t.conditions.list,
    addresses: t.addresses.list,
    rows,
    revocations,
  };
}

function guardrailData(g: NonNullable<Plan["guardrails"]>): ReviewData["guardrails"] {
  const results = g.results.map((r) => [
    r.rule,
    r.enforcement,
    r.change,
    r.principal,
    r.role,
    r.object,
    r.resource,
    r.error ?? "",
  ]);
  return { rules: g.rules.length, results };
}

/** The string tables and a row maker over them. */
function tables() {
  const principals = new Table<[string, number]>((v) => v[0]);
  const roles = new Table<string>((v) => v);
  const objects = new Table<[string, string]>((v) => `${v[1]} ${v[0]}`);
  const conditions = new Table<[string, string, string, string]>((v) => JSON.stringify(v));
  const addresses = new Table<string>((v) => v);
  const condition = (c: Condition | undefined): number => {
    if (!c) return -1;
    const expiry = expiryOf(c.expression)?.toISOString() ?? "";
    return conditions.of([c.title, c.description ?? "", c.expression, expiry]);
  };
  type Grantish = Pick<AccessChange, "object" | "principal" | "role" | "condition"> & { kind: string };
  const row = (g: Grantish, state: number, address: string | undefined): Row => [
    principals.of([g.principal, principalType(g.principal)]),
    roles.of(g.role),
    objects.of([g.object, g.kind]),
    condition(g.condition),
    state,
    address === undefined ? -1 : addresses.of(address),
    -1,
  ];
  return { principals, roles, objects, conditions, addresses, condition, row };
}
