// Audit logging a plan turns on or off, object by object: a whole-policy resource leaves exactly
// its own auditConfigs, so the live policy's other audit log settings go (and its own come). One
// entry per service and log type with its exemptions; a change of exemptions is the old entry
// removed and the new one added. Part of the plan's access delta, like grants.
import type { AuditChange, AuditConfig, Policy } from "../generated/schemas.js";
import { memberKey } from "../iam/members.js";
import type { PolicyKind } from "../gcp/object-kinds.js";

interface Entry {
  service: string;
  log_type: string;
  exempted_members: string[];
}

/** Each audit log setting of `configs`, keyed by service, log type and exemptions (by identity). */
export function entries(configs: readonly AuditConfig[] | undefined): Map<string, Entry> {
  const out = new Map<string, Entry>();
  for (const c of configs ?? []) {
    for (const l of c.auditLogConfigs ?? []) {
      const e: Entry = { service: c.service ?? "", log_type: l.logType ?? "LOG_TYPE_UNSPECIFIED", exempted_members: [...(l.exemptedMembers ?? [])].sort() };
      out.set(auditKey(e), e);
    }
  }
  return out;
}

/** What going from `before` to `after` turns on and off on one object, caused by `addresses`. */
export function auditChanges(p: { kind: PolicyKind; name: string; before: Policy; after: Policy }, addresses: readonly string[]): AuditChange[] {
  const a = entries(p.before.auditConfigs);
  const b = entries(p.after.auditConfigs);
  const out: AuditChange[] = [];
  const change = (e: Entry, action: AuditChange["action"]): AuditChange => ({ object: p.name, kind: p.kind, service: e.service, log_type: e.log_type, exempted_members: e.exempted_members, action, addresses: [...addresses] });
  for (const [k, e] of a) if (!b.has(k)) out.push(change(e, "remove"));
  for (const [k, e] of b) if (!a.has(k)) out.push(change(e, "add"));
  return out;
}

/** The key `entries` gives a change's setting. */
export function auditKey(c: Pick<AuditChange, "service" | "log_type" | "exempted_members">): string {
  return JSON.stringify([c.service, c.log_type, c.exempted_members.map(memberKey).sort()]);
}

/** "DATA_READ audit logging of allServices (exempting user:x@example.com)" */
export function auditText(c: Pick<AuditChange, "service" | "log_type" | "exempted_members">): string {
  return `${c.log_type} audit logging of ${c.service}${c.exempted_members.length ? ` (exempting ${c.exempted_members.join(", ")})` : ""}`;
}
