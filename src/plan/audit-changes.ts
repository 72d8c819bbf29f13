// Audit logging a plan turns on or off, object by object: a whole-policy resource leaves exactly
// its own auditConfigs, so the live policy's other audit log settings go (and its own come). One
// entry per service and log type with its exemptions; a change of exemptions is the old entry
// removed and the new one added. Part of the plan's access delta, like grants.
import type { AuditChange, Policy } from "../generated/schemas.js";
import { type AuditSetting, auditSettings } from "../iam/policy-effect.js";
import type { PolicyKind } from "../gcp/object-kinds.js";

/** What going from `before` to `after` turns on and off on one object, caused by `addresses`. */
export function auditChanges(
  p: { kind: PolicyKind; name: string; before: Policy; after: Policy },
  addresses: readonly string[],
): AuditChange[] {
  const a = auditSettings(p.before.auditConfigs);
  const b = auditSettings(p.after.auditConfigs);
  const out: AuditChange[] = [];
  const change = (e: AuditSetting, action: AuditChange["action"]): AuditChange => ({
    object: p.name,
    kind: p.kind,
    service: e.service,
    log_type: e.log_type,
    exempted_members: e.exempted_members,
    action,
    addresses: [...addresses],
  });
  for (const [k, e] of a) if (!b.has(k)) out.push(change(e, "remove"));
  for (const [k, e] of b) if (!a.has(k)) out.push(change(e, "add"));
  return out;
}
