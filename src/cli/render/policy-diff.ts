// 'details' at the approval prompt: for every policy the apply writes, its bindings and members
// before and after (+ granted, - revoked, unchanged members plain). Pure: planned policies → lines.
import type { Binding, Lookalike, Policy } from "../../generated/schemas.js";
import { lookalikeText } from "../../iam/lookalike.js";
import { kindLabel } from "../../gcp/object-kinds.js";
import { bindingKey } from "../../iam/conditions.js";
import { memberKey } from "../../iam/members.js";
import type { PlannedPolicy } from "../../plan/access.js";
import { type Line, seg } from "../../diagnostics/lines.js";
import { pushAll } from "../../base/arrays.js";

function byBinding(p: Policy): Map<string, Binding> {
  const out = new Map<string, Binding>();
  for (const b of p.bindings ?? []) {
    const k = bindingKey(b.role, b.condition);
    const seen = out.get(k);
    out.set(k, seen ? { ...seen, members: [...seen.members, ...b.members] } : b);
  }
  return out;
}

/** "~ condition description "a" → "b" (same expression)": how a reworded condition reads. */
function rewording(before: Binding, after: Binding): Line[] {
  const lines: Line[] = [];
  for (const field of ["title", "description"] as const) {
    const was = before.condition?.[field] ?? "";
    const now = after.condition?.[field] ?? "";
    if (was !== now)
      lines.push([
        seg("        ~ ", "change"),
        seg(`condition ${field} ${JSON.stringify(was)} → ${JSON.stringify(now)} (same expression)`, "change"),
      ]);
  }
  return lines;
}

/** The "! looks like another principal (…)" line under a member the plan flags, if it does. */
type Flags = ReadonlyMap<string, Lookalike>;

function flagged(rows: Line[], member: string, flags: Flags): void {
  const l = flags.get(memberKey(member));
  if (l) rows.push([seg("          ! ", "warning"), seg(lookalikeText(l), "warning")]);
}

function bindingLines(
  before: Binding | undefined,
  after: Binding | undefined,
  flags: Flags,
): { lines: Line[]; changed: boolean } {
  const b = before ?? after!;
  const title = `${b.role}${b.condition ? ` if "${b.condition.title}"` : ""}`;
  const reworded = before && after ? rewording(before, after) : [];
  const was = new Map((before?.members ?? []).map((m) => [memberKey(m), m]));
  const now = new Map((after?.members ?? []).map((m) => [memberKey(m), m]));
  const rows: Line[] = reworded;
  let changed = reworded.length > 0;
  for (const [k, m] of was) {
    if (now.has(k)) rows.push([seg(`          ${m}`)]);
    else {
      rows.push([seg("        - ", "remove"), seg(m, "remove")]);
      changed = true;
    }
    flagged(rows, m, flags);
  }
  for (const [k, m] of now) {
    if (was.has(k)) continue;
    rows.push([seg("        + ", "add"), seg(m, "add")]);
    flagged(rows, m, flags);
    changed = true;
  }
  return { lines: [[seg(`      ${title}`, "bold")], ...rows], changed };
}

/**
 * The bindings only in `before` paired with one only in `after` of the same role and condition
 * expression (another title or description): a condition reworded, shown as one binding. Both
 * keys map to the one after.
 */
function rewordedPairs(before: Map<string, Binding>, after: Map<string, Binding>): Map<string, string> {
  const pairs = new Map<string, string>();
  const added = [...after].filter(([k, b]) => !before.has(k) && b.condition);
  for (const [k, b] of before) {
    if (after.has(k) || !b.condition) continue;
    const match = added.find(
      ([k2, a]) => !pairs.has(k2) && a.role === b.role && a.condition!.expression === b.condition!.expression,
    );
    if (!match) continue;
    pairs.set(k, match[0]);
    pairs.set(match[0], match[0]);
  }
  return pairs;
}

/** Each policy that changes: only its changed bindings, each with all of its members; a member
 *  the plan flags as looking like another principal (`lookalikes`) is said so under it. */
export function policyDiffLines(policies: readonly PlannedPolicy[], lookalikes: readonly Lookalike[] = []): Line[] {
  const flags: Flags = new Map(lookalikes.map((l) => [memberKey(l.principal), l]));
  const lines: Line[] = [];
  for (const p of policies) {
    const before = byBinding(p.before);
    const after = byBinding(p.after);
    const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
    const reworded = rewordedPairs(before, after);
    const blocks = keys
      .filter((k) => !reworded.has(k) || before.has(k))
      .map((k) => bindingLines(before.get(k), after.get(reworded.get(k) ?? k), flags))
      .filter((b) => b.changed);
    if (!blocks.length) continue;
    lines.push([seg(`  ${kindLabel(p.kind)} ${p.name}`, "heading")]);
    for (const b of blocks) pushAll(lines, b.lines);
    lines.push([]);
  }
  if (!lines.length) lines.push([seg("No IAM policy is written: the apply only records state.", "dim")], []);
  return [[seg("Policies this apply writes (before → after):", "bold")], [], ...lines];
}
