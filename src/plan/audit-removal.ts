// A whole-policy resource leaves exactly its own audit configs on its object. When it is created
// over (or moved onto) an object whose live policy has audit logging, its diff starts from nothing
// and cannot show that logging going away, so the plan warns, naming what is removed.
import type { AuditConfig, ResourceChange } from "../generated/schemas.js";
import type { StackModel } from "../config/model.js";
import { type Diagnostic, warning } from "../diagnostics/diagnostic.js";
import { auditSettings, auditText } from "../iam/policy-effect.js";
import { EVERY_BINDING, type PlannedPolicy } from "./access.js";

/** The audit log settings of `before` that `after` does not keep, as text. */
function removed(before: readonly AuditConfig[], after: readonly AuditConfig[]): string[] {
  const kept = auditSettings(after);
  return [...auditSettings(before)].filter(([k]) => !kept.has(k)).map(([, e]) => auditText(e));
}

export function auditRemovalWarnings(
  stack: StackModel,
  changes: readonly ResourceChange[],
  policies: readonly PlannedPolicy[],
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const p of policies) {
    const gone = removed(p.before.auditConfigs ?? [], p.after.auditConfigs ?? []);
    if (!gone.length) continue;
    for (const address of p.byBinding.get(EVERY_BINDING) ?? []) {
      const c = changes.find((x) => x.address === address);
      const before = c?.change.before as { name?: unknown } | null | undefined;
      // An update's diff already lists the audit configs it removes.
      if (!c || (before && before.name === p.name)) continue;
      const where = stack.resources.has(address)
        ? { file: stack.source.file, ...stack.source.position(["resources", address], { key: true }) }
        : {};
      out.push(
        warning(`${address} removes the audit logging configured on ${p.name}: ${gone.join("; ")}`, {
          ...where,
          address,
          detail:
            "A whole-policy resource leaves exactly its own auditConfigs on the " +
            "object; declare these in its auditConfigs to keep them.",
        }),
      );
    }
  }
  return out;
}
