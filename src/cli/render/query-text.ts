// `converge query`'s text and JSON: each discovered object, its grants and whether the stack's
// state manages each one. Pure functions of the engine's result; server text is escaped.
import { terminalText } from "../../diagnostics/terminal-text.js";
import { countOf, type DiscoveredGrant } from "../../engine/discover.js";
import type { QueryResult } from "../../engine/query.js";
import { kindLabel, POLICY_KINDS } from "../../gcp/object-kinds.js";

function grantCounts(result: QueryResult): { grants: number; managed: number } {
  const all = result.report.objects.flatMap((o) => o.grants);
  return { grants: all.length, managed: all.filter((g) => g.managedBy.length > 0).length };
}

function grantLine(g: DiscoveredGrant, managing: boolean): string {
  const cond = g.condition ? ` (condition "${g.condition.title}")` : "";
  const how = g.managedBy.length > 0 ? `managed by ${g.managedBy.join(", ")}` : managing ? "unmanaged" : "";
  return `    ${g.role}  ${g.member}${cond}${how ? `  ${how}` : ""}`;
}

export function queryText(result: QueryResult): string {
  const { report, managedBy } = result;
  const lines: string[] = [];
  const listed = POLICY_KINDS.flatMap((k) => {
    const locations = report.locations[k];
    if (!locations) return [];
    const n = report.objects.filter((o) => o.kind === k).length;
    return [`${countOf(k, n)} in ${locations.length} location${locations.length === 1 ? "" : "s"}`];
  });
  lines.push(`Project ${report.project}: ${listed.join(", ")} (${result.target}).`);
  lines.push(
    managedBy
      ? `Managed grants: those of stack "${managedBy.stack}" (workspace ${managedBy.workspace}, ` +
          `${managedBy.resources} resources in its state).`
      : "No stack: which grants are managed is not known (run it beside a stack, or with -f STACK).",
  );
  for (const o of report.objects) {
    lines.push("", `  ${kindLabel(o.kind)} ${o.name}${o.policy ? "" : " (gone before its policy was read)"}`);
    if (o.policy && o.grants.length === 0) lines.push("    no grants");
    for (const g of o.grants) lines.push(grantLine(g, managedBy !== undefined));
  }
  const { grants, managed } = grantCounts(result);
  const tally = managedBy ? `: ${managed} managed, ${grants - managed} unmanaged` : "";
  lines.push("", `${report.objects.length} objects, ${grants} grants${tally}.`);
  // Each line escaped alone: terminalText shows a newline inside a value as "\n".
  return lines.map((l) => `${terminalText(l)}\n`).join("");
}

/** The result as JSON: stable field names, for scripts. */
export function queryJson(result: QueryResult): unknown {
  const { report, managedBy } = result;
  const { grants, managed } = grantCounts(result);
  return {
    format_version: "1.0",
    project: report.project,
    locations: report.locations,
    listed: report.listed,
    managed_by: managedBy ?? null,
    objects: report.objects.map((o) => ({
      kind: o.kind,
      name: o.name,
      location: o.location,
      exists: o.policy !== undefined,
      grants: o.grants.map((g) => ({
        role: g.role,
        member: g.member,
        ...(g.condition ? { condition: g.condition } : {}),
        managed_by: g.managedBy,
      })),
    })),
    counts: { objects: report.objects.length, grants, managed, unmanaged: grants - managed },
  };
}
