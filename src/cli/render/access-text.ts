// The access view: per cloud object, who gains (+) or loses (-) which role.
import type { AccessDelta } from "../../generated/schemas.js";
import { type Line, seg } from "./lines.js";
import { rewordingText } from "./access-summary.js";

export function accessLines(delta: AccessDelta | undefined): Line[] {
  const lines: Line[] = [];
  const reworded = delta?.condition_changes ?? [];
  if (!delta || (!delta.changes.length && !delta.incomplete.length && !reworded.length)) {
    lines.push([seg("No access changes.", "heading"), seg(" Nobody gains or loses a role.")]);
    return lines;
  }
  const grants = delta.changes.filter((c) => c.action === "grant").length;
  lines.push([seg("Access changes", "heading"), seg(` (${grants} granted, ${delta.changes.length - grants} revoked):`)]);
  const objects = [...new Set([...delta.changes, ...reworded].map((c) => c.object))];
  for (const o of objects) {
    lines.push([]);
    lines.push([seg(`  ${o}`, "bold")]);
    for (const c of reworded) if (c.object === o) lines.push([seg("    ~ ", "change"), seg(`${c.role}: ${rewordingText(c)}`), seg(`  (${c.addresses.join(", ")})`, "dim")]);
    const rows = delta.changes.filter((c) => c.object === o);
    if (!rows.length) continue;
    const pad = Math.max(...rows.map((r) => r.principal.length));
    for (const r of rows) {
      const cond = r.condition ? ` if "${r.condition.title}"` : "";
      lines.push([
        seg(r.action === "grant" ? "    + " : "    - ", r.action === "grant" ? "add" : "remove"),
        seg(`${r.principal.padEnd(pad)}  ${r.role}${cond}`),
        seg(`  (${r.addresses.join(", ")})`, "dim"),
      ]);
    }
  }
  if (delta.incomplete.length) {
    lines.push([]);
    lines.push([seg(`Known only after apply for: ${delta.incomplete.join(", ")}.`, "warning")]);
  }
  return lines;
}
