// The principals of a plan's access delta that may look like another principal (../iam/lookalike.ts),
// compared with each other and with every member of the policies the plan touches.
import type { AccessDelta, Lookalike } from "../generated/schemas.js";
import { lookalikes } from "../iam/lookalike.js";
import type { PlannedPolicy } from "./access.js";
import type { ResourceDecl, StackModel } from "../config/model.js";
import { type Diagnostic, error, warning } from "../diagnostics/diagnostic.js";
import { lintCode } from "../config/lint.js";
import { type DocPath, formatPath } from "../yaml/source.js";
import { listed } from "../diagnostics/listed.js";

/** The members of the policies before and after the plan; none that holds a secret's text (the
 *  delta's principals are redacted, these are not, and a lookalike names the one it looks like). */
function* policyMembers(policies: readonly PlannedPolicy[], secrets: ReadonlySet<string>): Generator<string> {
  for (const p of policies) {
    for (const policy of [p.before, p.after]) {
      for (const b of policy.bindings ?? []) {
        for (const m of b.members ?? []) {
          let secret = false;
          for (const s of secrets) if (s && m.includes(s)) secret = true;
          if (!secret) yield m;
        }
      }
    }
  }
}

function* deltaPrincipals(delta: AccessDelta): Generator<string> {
  for (const c of delta.changes) yield c.principal;
  for (const c of delta.condition_changes ?? []) yield* c.principals;
}

export function accessLookalikes(
  delta: AccessDelta,
  policies: readonly PlannedPolicy[],
  secrets: ReadonlySet<string>,
): Lookalike[] {
  return lookalikes(deltaPrincipals(delta), policyMembers(policies, secrets));
}

/** Where the stack writes `member` in a resource: its `member`, its item of `members`, or of a
 *  policy binding's `members`; the resource's properties when it is not written there literally. */
function memberPath(r: ResourceDecl, member: string): DocPath {
  const base = ["resources", r.decl, "properties"];
  const p = r.properties;
  if (p.member === member) return [...base, "member"];
  if (Array.isArray(p.members) && p.members.includes(member)) return [...base, "members", p.members.indexOf(member)];
  const bindings = Array.isArray(p.bindings) ? p.bindings : [];
  for (let i = 0; i < bindings.length; i++) {
    const members = (bindings[i] as { members?: unknown }).members;
    if (!Array.isArray(members) || !members.includes(member)) continue;
    return [...base, "bindings", i, "members", members.indexOf(member)];
  }
  return base;
}

/**
 * The lookalike-principal lint rule at plan time: a principal the stack grants that is all ASCII
 * but confusable with another principal of the plan or of its policies (`user:bob1@…` beside
 * `user:bobl@…`). Those beyond ASCII were reported when the stack loaded.
 */
export function confusableGrantWarnings(stack: StackModel, delta: AccessDelta, strict: boolean): Diagnostic[] {
  if (stack.lint["lookalike-principal"] === false) return [];
  const out: Diagnostic[] = [];
  for (const l of delta.lookalikes ?? []) {
    if (l.reasons.length || !l.looks_like?.length) continue;
    const grant = delta.changes.find((c) => c.action === "grant" && c.principal === l.principal);
    const address = grant?.addresses[0];
    const r = address === undefined ? undefined : stack.resources.get(address);
    if (!r) continue;
    const path = memberPath(r, l.principal);
    const pos = stack.source.position(path);
    const detail = "Unicode's confusables make them read alike: check that the grant names the principal meant.";
    out.push(
      (strict ? error : warning)(`${address}: ${l.principal} looks like ${listed(l.looks_like, 5)}`, {
        file: stack.source.file,
        line: pos.line,
        column: pos.column,
        path: formatPath(path),
        code: lintCode("lookalike-principal"),
        detail: `${detail} [lint: lookalike-principal]`,
        address,
      }),
    );
  }
  return out;
}
