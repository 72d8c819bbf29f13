// The human lines of the Pulumi-shaped Automation API (./workspace.ts: onOutput, stdout): a line
// per change of a plan and per step of an apply, and Pulumi's counts by operation type. What a
// server or a stack author wrote is shown through terminalText, and no secret reaches a line (the
// plan is the redacted one; the events are scrubbed by the engine).
import { terminalText } from "../diagnostics/terminal-text.js";
import type { EngineEvent } from "../contracts/events.js";
import type { Plan, ResourceChange } from "../generated/schemas.js";
import { redactText } from "../config/redact.js";

/** Pulumi's names of what happens to a resource. */
export type OpType = "same" | "create" | "update" | "delete" | "replace" | "import" | "read";

/** The operation type of a change, by its action. */
function opOf(c: ResourceChange): OpType {
  const a = c.change.action;
  if (c.change.importing) return "import";
  return a === "no-op" ? "same" : a;
}

/** How many resources of the plan each operation type touches. */
export function changeSummary(plan: Plan): Partial<Record<OpType, number>> {
  const out: Partial<Record<OpType, number>> = {};
  for (const c of plan.resource_changes) {
    const op = opOf(c);
    out[op] = (out[op] ?? 0) + 1;
  }
  return out;
}

const SYMBOL: Record<OpType, string> = {
  same: " ",
  create: "+",
  update: "~",
  delete: "-",
  replace: "+-",
  import: "=",
  read: ">",
};

/** A line per change that is not "same", then the counts. */
export function planLines(plan: Plan): string[] {
  const lines = plan.resource_changes
    .filter((c) => opOf(c) !== "same")
    .map((c) => `  ${SYMBOL[opOf(c)]} ${c.type} ${c.address} ${opOf(c)}`);
  const counts = Object.entries(changeSummary(plan)).map(([op, n]) => `${n} to ${op}`);
  lines.push(`Resources: ${counts.length ? counts.join(", ") : "no changes"}`);
  return lines.map((l) => redactText(terminalText(l)));
}

/** The line of an engine event a person follows an apply by (none for most events). */
export function eventLine(e: EngineEvent): string | undefined {
  if (e.type === "step" && e.action !== "no-op") {
    const what = `${e.address} ${e.action}`;
    const line =
      e.phase === "start"
        ? `  ${what}...`
        : e.phase === "done"
          ? `  ${what} done`
          : e.phase === "error"
            ? `  ${what} failed: ${e.error?.detail ?? e.error?.summary ?? "error"}`
            : `  ${what} ${e.phase}`;
    return redactText(terminalText(line));
  }
  if (e.type === "retry")
    return redactText(
      terminalText(`  ${e.resource}: ${e.call} ${e.status}, retrying (attempt ${e.attempt} of ${e.maxAttempts})`),
    );
  return undefined;
}
