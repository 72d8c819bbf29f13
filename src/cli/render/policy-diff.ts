// 'details' at the approval prompt: for every policy the apply writes, its bindings and members
// before and after (+ granted, - revoked, unchanged members plain). Pure: planned policies → lines.
import type { Binding, Policy } from "../../generated/schemas.js";
import { kindLabel } from "../../gcp/object-kinds.js";
import { bindingKey } from "../../iam/conditions.js";
import { memberKey } from "../../iam/members.js";
import type { PlannedPolicy } from "../../plan/access.js";
import { type Line, seg } from "./lines.js";
import { pushAll } from "../../arrays.js";

function byBinding(p: Policy): Map<string, Binding> {
  const out = new Map<string, Binding>();
  for (const b of p.bindings ?? []) {
    const k = bindingKey(b.role, b.condition);
    const seen = out.get(k);
    out.set(k, seen ? { ...seen, members: [...seen.members, ...b.members] } : b);
  }
  return out;
}

function bindingLines(before: Binding | undefined, after: Binding | undefined): { lines: Line[]; changed: boolean } {
  const b = before ?? after!;
  const title = `${b.role}${b.condition ? ` if "${b.condition.title}"` : ""}`;
  const was = new Map((before?.members ?? []).map((m) => [memberKey(m), m]));
  const now = new Map((after?.members ?? []).map((m) => [memberKey(m), m]));
  const rows: Line[] = [];
  let changed = false;
  for (const [k, m] of was) {
    if (now.has(k)) rows.push([seg(`          ${m}`)]);
    else {
      rows.push([seg("        - ", "remove"), seg(m, "remove")]);
      changed = true;
    }
  }
  for (const [k, m] of now) {
    if (was.has(k)) continue;
    rows.push([seg("        + ", "add"), seg(m, "add")]);
    changed = true;
  }
  return { lines: [[seg(`      ${title}`, "bold")], ...rows], changed };
}

/** Each policy that changes: only its changed bindings, each with all of its members. */
export function policyDiffLines(policies: readonly PlannedPolicy[]): Line[] {
  const lines: Line[] = [];
  for (const p of policies) {
    const before = byBinding(p.before);
    const after = byBinding(p.after);
    const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
    const blocks = keys.map((k) => bindingLines(before.get(k), after.get(k))).filter((b) => b.changed);
    if (!blocks.length) continue;
    lines.push([seg(`  ${kindLabel(p.kind)} ${p.name}`, "heading")]);
    for (const b of blocks) pushAll(lines, b.lines);
    lines.push([]);
  }
  if (!lines.length) lines.push([seg("No IAM policy is written: the apply only records state.", "dim")], []);
  return [[seg("Policies this apply writes (before → after):", "bold")], [], ...lines];
}
