// The access view: per cloud object, who gains (+) or loses (-) which role. Condition titles and
// descriptions are shown whole here (the summaries shorten long ones).
import type { AccessChange, AccessDelta, ConditionChange } from "../../generated/schemas.js";
import { type Line, seg } from "../../diagnostics/lines.js";
import { lookalikeFlag, rewordingText } from "./access-summary.js";
import { lookalikeText } from "../../iam/lookalike.js";
import { maxOf } from "../../base/arrays.js";

export function accessLines(delta: AccessDelta | undefined): Line[] {
  const lines: Line[] = [];
  const flag = lookalikeFlag(delta);
  const reworded = delta?.condition_changes ?? [];
  if (!delta || (!delta.changes.length && !delta.incomplete.length && !reworded.length)) {
    lines.push([seg("No access changes.", "heading"), seg(" Nobody gains or loses a role.")]);
    return lines;
  }
  const grants = delta.changes.filter((c) => c.action === "grant").length;
  lines.push([
    seg("Access changes", "heading"),
    seg(` (${grants} granted, ${delta.changes.length - grants} revoked):`),
  ]);
  for (const [o, { rows, rewordings }] of byObject(delta.changes, reworded)) {
    lines.push([]);
    lines.push([seg(`  ${o}`, "bold")]);
    for (const c of rewordings) {
      const by = seg(`  (${c.addresses.join(", ")})`, "dim");
      lines.push([seg("    ~ ", "change"), seg(`${c.role}: ${rewordingText(c, false)}`), by]);
    }
    if (!rows.length) continue;
    const pad = maxOf(rows.map((r) => r.principal.length + flag(r.principal).length));
    for (const r of rows) {
      const cond = r.condition ? ` if "${r.condition.title}"` : "";
      lines.push([
        seg(r.action === "grant" ? "    + " : "    - ", r.action === "grant" ? "add" : "remove"),
        seg(`${(r.principal + flag(r.principal)).padEnd(pad)}  ${r.role}${cond}`),
        seg(`  (${r.addresses.join(", ")})`, "dim"),
      ]);
    }
  }
  if (delta.lookalikes?.length) {
    lines.push([]);
    for (const l of delta.lookalikes) lines.push([seg("! ", "warning"), seg(`${l.principal} ${lookalikeText(l)}`)]);
  }
  if (delta.incomplete.length) {
    lines.push([]);
    lines.push([seg(`Known only after apply for: ${delta.incomplete.join(", ")}.`, "warning")]);
  }
  return lines;
}

/** The changes and rewordings of each object, the objects in the order they first appear (the
 *  changes', then the rewordings'): one pass, where a scan of every change per object took half a
 *  minute for 12,000 objects and 110,000 changes. */
function byObject(
  changes: readonly AccessChange[],
  reworded: readonly ConditionChange[],
): Map<string, { rows: AccessChange[]; rewordings: ConditionChange[] }> {
  const out = new Map<string, { rows: AccessChange[]; rewordings: ConditionChange[] }>();
  const of = (object: string) => {
    let e = out.get(object);
    if (!e) out.set(object, (e = { rows: [], rewordings: [] }));
    return e;
  };
  for (const c of changes) of(c.object).rows.push(c);
  for (const c of reworded) of(c.object).rewordings.push(c);
  return out;
}
