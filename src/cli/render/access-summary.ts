// What a reviewer must see of access, wherever the decision is made: the summary under every plan
// and above the approval prompt, and, inside a resource's block, the grants it revokes that its
// own diff does not list (members of its role granted outside converge, the old object of a
// replacement). Pure: plan data → lines.
import type {
  AccessChange,
  AccessDelta,
  AuditConfig,
  ConditionChange,
  Lookalike,
  Plan,
  ResourceChange,
} from "../../generated/schemas.js";
import { conditionKey } from "../../iam/conditions.js";
import { isPublicMember, memberKey } from "../../iam/members.js";
import { isBasicRole } from "../../iam/roles.js";
import { type Line, seg } from "../../diagnostics/lines.js";
import { auditKey, auditSettings, auditText } from "../../iam/policy-effect.js";
import { listed } from "../../diagnostics/listed.js";
import { pushAll } from "../../base/arrays.js";
import { SENSITIVE_TEXT } from "../../base/sensitive-text.js";
import { lookalikeText } from "../../iam/lookalike.js";
import { guardrailLines } from "./guardrails.js";

const where = (c: AccessChange) =>
  `${c.role}${c.condition ? ` if "${shortText(c.condition.title)}"` : ""} on ${c.object}`;
const by = (c: AccessChange) => (c.addresses.length ? ` (${c.addresses.join(", ")})` : "");

/**
 * `Access: N granted, M revoked`, then each revocation, each public principal and basic role
 * granted, and the number of lint warnings. Shown under every plan that changes something and
 * repeated directly above the approval prompt.
 */
export function accessSummaryLines(plan: Plan, lintWarnings = 0): Line[] {
  const changes = plan.access_changes?.changes ?? [];
  const grants = changes.filter((c) => c.action === "grant");
  const revokes = changes.filter((c) => c.action === "revoke");
  const lines: Line[] = [[seg("Access: ", "bold"), seg(`${grants.length} granted, ${revokes.length} revoked`, "bold")]];
  // Who loses (every one: no access is lost unseen), then who gains (named up to a bound, the
  // rest counted; --view access lists them all).
  const flag = lookalikeFlag(plan.access_changes);
  for (const r of revokes) {
    const text = `${who(r.principal)}${flag(r.principal)} loses ${where(r)}`;
    lines.push([seg("  - ", "remove"), seg(text), seg(by(r), "dim")]);
  }
  for (const g of grants.slice(0, GRANTS_NAMED)) {
    const text = `${who(g.principal)}${flag(g.principal)} gains ${where(g)}`;
    lines.push([seg("  + ", "add"), seg(text), seg(by(g), "dim")]);
  }
  if (grants.length > GRANTS_NAMED)
    lines.push([
      seg("  + ", "add"),
      seg(`and ${grants.length - GRANTS_NAMED} more granted (plan --view access lists them all)`),
    ]);
  for (const g of grants) {
    // A public principal given a basic role: one warning saying both.
    const publicly = isPublicMember(g.principal);
    const basic = isBasicRole(g.role);
    if (publicly || basic)
      lines.push([
        seg("  ! ", "warning"),
        seg(`${g.principal}${publicly ? " (public)" : ""} gains ${basic ? "the basic role " : ""}${where(g)}`),
        seg(by(g), "dim"),
      ]);
  }
  pushAll(lines, lookalikeLines(plan));
  for (const c of plan.access_changes?.condition_changes ?? [])
    lines.push([
      seg("  ~ ", "change"),
      seg(`${c.role} on ${c.object}: ${rewordingText(c)}`),
      seg(c.addresses.length ? ` (${c.addresses.join(", ")})` : "", "dim"),
    ]);
  pushAll(lines, auditSummaryLines(plan));
  const incomplete = plan.access_changes?.incomplete ?? [];
  if (incomplete.length)
    lines.push([seg("  ? ", "warning"), seg(`known only after apply for: ${incomplete.join(", ")}`)]);
  if (lintWarnings)
    lines.push([
      seg("  ! ", "warning"),
      seg(`${lintWarnings} lint warning${lintWarnings === 1 ? "" : "s"} (see above)`),
    ]);
  pushAll(lines, guardrailLines(plan.guardrails));
  return lines;
}

const MAX_NAMED = 10;
/** Grants the summary names before it counts the rest. */
const GRANTS_NAMED = 20;

/** A principal as the summary names it: one computed from a secret is said to be one (its
 *  name is hidden), so the reviewer knows someone is there. */
function who(principal: string): string {
  return principal.includes(SENSITIVE_TEXT) ? `${principal} (a principal computed from a secret)` : principal;
}

/** Condition titles and descriptions longer than this are cut in summaries; the plan's diff (and
 *  `details` at the prompt) shows them whole. */
export const SUMMARY_TEXT_MAX = 60;

/** `text`, cut to SUMMARY_TEXT_MAX characters with "…" when longer. */
export function shortText(text: string, max = SUMMARY_TEXT_MAX): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** " (lookalike)" after a principal the plan flags as looking like another, "" after others. */
export function lookalikeFlag(delta: AccessDelta | undefined): (principal: string) => string {
  const flagged = new Set((delta?.lookalikes ?? []).map((l) => l.principal));
  return (p) => (flagged.has(p) ? " (lookalike)" : "");
}

/** A warning per principal that looks like another, its suspect characters spelled out. */
function lookalikeLines(plan: Plan): Line[] {
  const all = plan.access_changes?.lookalikes ?? [];
  const warn = (text: string): Line => [seg("  ! ", "warning"), seg(text)];
  const lines = all.slice(0, GRANTS_NAMED).map((l) => warn(`${l.principal} ${lookalikeText(l)}`));
  const more = all.length - GRANTS_NAMED;
  if (more > 0) lines.push(warn(`and ${more} more principals that look like others (plan --json lists them)`));
  return lines;
}

/** `condition "T" description "a" → "b", same expression: user:x keeps access`: what changes of
 *  a condition whose expression stays, and the members who keep their access through it; long
 *  titles and descriptions shortened unless `short` is false. */
export function rewordingText(c: ConditionChange, short = true): string {
  const q = (s: string | undefined) => (s ? JSON.stringify(short ? shortText(s) : s) : "(none)");
  // Two long values that differ only past the cut are shown whole: the change must be visible.
  const change = (a: string | undefined, b: string | undefined) => {
    const whole = shortText(a ?? "") === shortText(b ?? "");
    const f = (s: string | undefined) => (whole && s ? JSON.stringify(s) : q(s));
    return `${f(a)} → ${f(b)}`;
  };
  const title = c.before.title !== c.after.title ? `title ${change(c.before.title, c.after.title)}` : undefined;
  const described = (c.before.description ?? "") !== (c.after.description ?? "");
  const description = described ? `description ${change(c.before.description, c.after.description)}` : undefined;
  const what = title
    ? `condition ${[title, description].filter(Boolean).join(", ")}`
    : `condition ${q(c.before.title)} ${description ?? "wording"}`;
  const n = c.principals.length;
  const named = listed(c.principals, MAX_NAMED);
  return `${what}, same expression: ${named} ${n === 1 ? "keeps" : "keep"} access`;
}

/** `Audit logging: N turned on, M turned off`, then each, when the plan changes any. */
function auditSummaryLines(plan: Plan): Line[] {
  const audit = plan.access_changes?.audit_changes ?? [];
  if (!audit.length) return [];
  const off = audit.filter((a) => a.action === "remove");
  const on = audit.filter((a) => a.action === "add");
  const lines: Line[] = [
    [seg("Audit logging: ", "bold"), seg(`${on.length} turned on, ${off.length} turned off`, "bold")],
  ];
  for (const a of off)
    lines.push([
      seg("  - ", "remove"),
      seg(`${auditText(a)} is turned off on ${a.object}`),
      seg(a.addresses.length ? ` (${a.addresses.join(", ")})` : "", "dim"),
    ]);
  for (const a of on)
    lines.push([
      seg("  + ", "add"),
      seg(`${auditText(a)} is turned on for ${a.object}`),
      seg(a.addresses.length ? ` (${a.addresses.join(", ")})` : "", "dim"),
    ]);
  return lines;
}

/** Lines inside a whole-policy resource's block for the audit logging it turns off that its
 *  diff does not show: configured on the object outside converge (not in its before). */
function auditRemovalLines(c: ResourceChange, plan: Plan): Line[] {
  const mine = (plan.access_changes?.audit_changes ?? []).filter(
    (a) => a.action === "remove" && a.addresses.includes(c.address),
  );
  if (!mine.length) return [];
  const before =
    isObj(c.change.before) && Array.isArray(c.change.before.auditConfigs)
      ? auditSettings(c.change.before.auditConfigs as AuditConfig[])
      : new Map();
  return mine
    .filter((a) => !before.has(auditKey(a)))
    .map((a): Line => [
      seg("      - ", "remove"),
      seg(
        `auditConfigs: ${a.service} ${a.log_type}` +
          `${a.exempted_members.length ? ` (exempting ${a.exempted_members.join(", ")})` : ""}`,
      ),
      seg("  # configured outside converge, will be removed", "remove"),
    ]);
}

/** Lines inside a resource's block after its diff: the audit logging it turns off that the diff
 *  does not show, and each principal it grants or revokes that may look like another. */
export function blockNoteLines(c: ResourceChange, plan: Plan): Line[] {
  const lines = auditRemovalLines(c, plan);
  for (const l of lookalikesByAddress(plan).get(c.address) ?? []) {
    const note = seg(`  # ${lookalikeText(l)}`, "warning");
    lines.push([seg("      ! ", "warning"), seg(JSON.stringify(l.principal)), note]);
  }
  return lines;
}

const lookalikeIndex = new WeakMap<Plan, Map<string, Lookalike[]>>();

/** The lookalike principals each address grants or revokes (built once per plan). */
function lookalikesByAddress(plan: Plan): Map<string, Lookalike[]> {
  const known = lookalikeIndex.get(plan);
  if (known) return known;
  const out = new Map<string, Lookalike[]>();
  const found = new Map((plan.access_changes?.lookalikes ?? []).map((l) => [l.principal, l]));
  for (const c of found.size ? (plan.access_changes?.changes ?? []) : []) {
    const l = found.get(c.principal);
    if (!l) continue;
    for (const a of c.addresses) {
      const list = out.get(a) ?? [];
      if (!list.includes(l)) list.push(l);
      out.set(a, list);
    }
  }
  lookalikeIndex.set(plan, out);
  return out;
}

/** The revocations of each address, from the plan's access delta. */
export function revocationsByAddress(plan: Plan): Map<string, AccessChange[]> {
  const out = new Map<string, AccessChange[]>();
  for (const c of plan.access_changes?.changes ?? []) {
    if (c.action !== "revoke") continue;
    for (const a of c.addresses) {
      const list = out.get(a);
      if (list) list.push(c);
      else out.set(a, [c]);
    }
  }
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const grantKey = (object: unknown, role: unknown, condition: unknown) =>
  JSON.stringify([object, role, conditionKey(condition as AccessChange["condition"])]);

/** Members the block's own diff already shows as removed: the before's members that the after
 *  does not list (all of them for a delete), keyed by the before's object, role and condition. */
/** The grants a resource value holds on `object`, as grantKey + member key: a binding's or
 *  member's own, or each binding's of a whole policy. */
function grantsIn(v: Obj | undefined, object: unknown): string[] {
  if (!v) return [];
  const parts = Array.isArray(v.bindings) ? v.bindings.filter(isObj) : [v];
  return parts.flatMap((b) => {
    const members = Array.isArray(b.members) ? b.members.map(String) : typeof b.member === "string" ? [b.member] : [];
    const key = grantKey(object, b.role, b.condition);
    return members.map((m) => `${key}\u0000${memberKey(m)}`);
  });
}

/** The grants the change's own diff shows removed: gone from its member lists. A grant that moves
 *  with the resource to another object stays in the lists, so its revoke is not shown there. */
function removedInDiff(c: ResourceChange): Set<string> {
  const before = isObj(c.change.before) ? c.change.before : undefined;
  if (!before) return new Set();
  const kept = new Set(grantsIn(isObj(c.change.after) ? c.change.after : undefined, before.name));
  return new Set(grantsIn(before, before.name).filter((g) => !kept.has(g)));
}

/** Lines inside a resource's block for the grants it revokes that its diff does not show. */
export function revocationLines(c: ResourceChange, revokes: readonly AccessChange[] | undefined): Line[] {
  if (!revokes?.length) return [];
  const shown = removedInDiff(c);
  const mine = isObj(c.change.after) ? c.change.after : isObj(c.change.before) ? c.change.before : undefined;
  const own = mine ? grantKey(mine.name, mine.role, mine.condition) : undefined;
  // A whole-policy resource owns every grant on its object.
  const ownsObject = mine !== undefined && Array.isArray(mine.bindings);
  const lines: Line[] = [];
  for (const r of revokes) {
    const key = grantKey(r.object, r.role, r.condition);
    if (shown.has(`${key}\u0000${memberKey(r.principal)}`)) continue;
    const note =
      key === own || (ownsObject && r.object === mine.name)
        ? "granted outside converge, will be revoked"
        : `${where(r)}: will be revoked`;
    lines.push([seg("      - ", "remove"), seg(JSON.stringify(r.principal)), seg(`  # ${note}`, "remove")]);
  }
  return lines;
}
