// Claims: what a resource manages, as its driver declares it (`IamDriver.claims`). This room is
// their one home: the claims of a state, a plan or a value; when two conflict (./conflict-rule.ts:
// one rule for a stack's own resources and across stacks); how a claim is shown, keyed and
// redacted. A backend that sees every stack (PostgreSQL) stores them through the state contract's
// `ClaimRegistry` capability (../state/store.ts) and answers with the conflicts found here.
import { addressText } from "../diagnostics/listed.js";
import { error, UserError } from "../diagnostics/diagnostic.js";
import { claimsConflict, type ConflictKind } from "./conflict-rule.js";
import { inputsOf } from "../drivers/inputs.js";
import { resourceDriver } from "../drivers/registry.js";
import type { Claim, SensitiveClaimField } from "../drivers/types.js";
import { SENSITIVE_TEXT } from "../base/sensitive-text.js";
import type { Plan, State } from "../generated/schemas.js";
import { pushAll } from "../base/arrays.js";
import { conditionKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";

/** A claim of one resource of a state or a plan. */
export interface ResourceClaim {
  address: string;
  claim: Claim;
}

/** A recorded claim and who holds it. */
export interface OwnedClaim extends ResourceClaim {
  stack: string;
  workspace: string;
  /** Not in its state yet: reserved by an apply of that stack that is running now. */
  pending?: boolean;
}

/** A claim of ours that another stack's (or workspace's) recorded claim conflicts with. */
export interface ClaimConflict {
  kind: ConflictKind;
  mine: ResourceClaim;
  owner: OwnedClaim;
}

/** The claim field each secret input field makes secret. */
const SECRET_FIELDS: Readonly<Record<string, SensitiveClaimField>> = {
  name: "object",
  role: "role",
  condition: "condition",
  member: "member",
};

/** The claim fields computed from the input fields `mask` marks secret (a resource's
 *  `sensitive`, a plan's `after_sensitive`). */
function sensitiveFields(mask: unknown): SensitiveClaimField[] {
  if (mask === true) return ["object", "role", "condition", "member"];
  if (!mask || typeof mask !== "object") return [];
  return Object.keys(mask).flatMap((k) => (Object.hasOwn(SECRET_FIELDS, k) ? [SECRET_FIELDS[k]!] : []));
}

/** The claims of `value` (inputs, or a plan's after value) of a resource of type `type`; none for
 *  types without a driver. `mask`: which of its fields are secret (the claims remember it). */
export function claimsOfValue(type: string, address: string, value: unknown, mask?: unknown): ResourceClaim[] {
  const d = resourceDriver(type);
  if (!d) return [];
  const secret = sensitiveFields(mask);
  return d
    .claims(inputsOf(d, value))
    .map((claim) => ({ address, claim: secret.length ? { ...claim, sensitive: secret } : claim }));
}

/** The claims of the plan's resources that exist once it is applied (values known at plan time). */
export function planClaims(plan: Plan): ResourceClaim[] {
  const out: ResourceClaim[] = [];
  for (const c of plan.resource_changes) {
    if (c.mode !== "managed" || c.config || !c.change.after || c.change.action === "delete") continue;
    pushAll(out, claimsOfValue(c.type, c.address, c.change.after, c.change.after_sensitive));
  }
  return out;
}

/** What the resources of a state manage. */
export function stateClaims(state: State): ResourceClaim[] {
  return state.resources.flatMap((r) => claimsOfValue(r.type, r.address, r.inputs, r.sensitive));
}

/** `c` as it may be shown: its secret fields (those it recorded as such) hidden. */
export function redactClaim(c: Claim): Claim {
  if (!c.sensitive?.length) return c;
  const out: Record<string, unknown> = { ...c };
  for (const f of c.sensitive) {
    const v = out[f];
    if (v === undefined) continue;
    out[f] = f === "condition" ? { title: SENSITIVE_TEXT, expression: SENSITIVE_TEXT } : SENSITIVE_TEXT;
  }
  return out as Claim;
}

/** The columns that key a claim: object, scope, role, condition key, member key ("" when none). */
export function claimColumns(c: Claim): {
  object: string;
  scope: string;
  role: string;
  conditionKey: string;
  memberKey: string;
} {
  if (c.scope === "policy") return { object: c.object, scope: c.scope, role: "", conditionKey: "", memberKey: "" };
  return {
    object: c.object,
    scope: c.scope,
    role: c.role,
    conditionKey: conditionKey(c.condition),
    memberKey: c.scope === "member" ? memberKey(c.member) : "",
  };
}

/** Each of `mine` that conflicts with one of `others`, with the first such owner. */
export function claimConflicts(mine: readonly ResourceClaim[], others: readonly OwnedClaim[]): ClaimConflict[] {
  const byObject = new Map<string, OwnedClaim[]>();
  for (const o of others) byObject.set(o.claim.object, [...(byObject.get(o.claim.object) ?? []), o]);
  const out: ClaimConflict[] = [];
  for (const m of mine) {
    for (const owner of byObject.get(m.claim.object) ?? []) {
      const kind = claimsConflict(owner.claim, m.claim);
      if (kind) {
        out.push({ kind, mine: m, owner });
        break;
      }
    }
  }
  return out;
}

/** "role R on OBJECT" / "member M of role R on OBJECT" / "the whole policy of OBJECT". */
export function describeClaim(claim: Claim): string {
  const c = redactClaim(claim);
  if (c.scope === "policy") return `the whole IAM policy of ${c.object}`;
  const cond = c.condition ? ` (condition "${c.condition.title}")` : "";
  return c.scope === "member"
    ? `member ${c.member} of role ${c.role}${cond} on ${c.object}`
    : `the binding of role ${c.role}${cond} on ${c.object}`;
}

function conflictError(c: ClaimConflict, where: string) {
  const o = c.owner;
  const holds = o.pending ? "is applying now" : "manages";
  return error(
    `resource ${addressText(c.mine.address)} claims ${describeClaim(c.mine.claim)}, which stack "${o.stack}` +
      `" workspace "${o.workspace}" ${holds} (resource ${addressText(o.address)}: ${describeClaim(o.claim)})`,
    {
      code: "state/claim-conflict",
      address: c.mine.address,
      file: where,
      detail:
        `Two stacks that manage the same grant undo each other's changes at every apply. Manage it in one ` +
        `stack only: remove it from this stack, or from stack "${o.stack}" (workspace "${o.workspace}") and ` +
        `apply there first. \`converge state claims\` lists what each stack manages. Nothing was written.`,
    },
  );
}

/** Conflicts with one owner listed in one error's detail, then counted. */
const GROUP_LISTED = 10;

/** One error for the conflicts of several resources with one owner (a stack that manages eight of
 *  the grants is one cause, not eight errors). */
function groupError(group: readonly ClaimConflict[], where: string) {
  const o = group[0]!.owner;
  const holds = o.pending ? "is applying now" : "manages";
  const lines = group
    .slice(0, GROUP_LISTED)
    .map(
      (c) =>
        `  - resource ${addressText(c.mine.address)} claims ` +
        `${describeClaim(c.mine.claim)} (their resource ${addressText(c.owner.address)})`,
    );
  if (group.length > GROUP_LISTED) lines.push(`  and ${group.length - GROUP_LISTED} more`);
  return error(`${group.length} resources claim grants that stack "${o.stack}" workspace "${o.workspace}" ${holds}`, {
    code: "state/claim-conflict",
    address: group[0]!.mine.address,
    file: where,
    detail:
      `${lines.join("\n")}\nTwo stacks that manage the same grant undo each other's changes at every apply. ` +
      `Manage them in one stack only: remove them from this stack, or from stack "${o.stack}" (workspace "` +
      `${o.workspace}") and apply there first. \`converge state claims\` lists what each stack manages. ` +
      `Nothing was written.`,
  });
}

/** The `state/claim-conflict` errors of `conflicts`, for a state in `where`: one for each owner
 *  (stack, workspace, applying or not), listing its conflicts when there are several. */
export function claimConflictError(conflicts: readonly ClaimConflict[], where: string): UserError {
  const byOwner = new Map<string, ClaimConflict[]>();
  for (const c of conflicts) {
    const key = JSON.stringify([c.owner.stack, c.owner.workspace, c.owner.pending === true]);
    const group = byOwner.get(key);
    if (group) group.push(c);
    else byOwner.set(key, [c]);
  }
  return new UserError(
    [...byOwner.values()].map((g) => (g.length === 1 ? conflictError(g[0]!, where) : groupError(g, where))),
  );
}
