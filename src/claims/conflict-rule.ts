// When two resources of a stack claim the same grant. One pure rule across types and scopes
// (`claimsConflict`), and an index that finds a new claim's conflicts without comparing it with
// every other claim of the stack.
import { addressText } from "../diagnostics/listed.js";
import { conditionKey } from "../iam/conditions.js";
import { memberKey } from "../iam/members.js";
import type { Claim } from "../drivers/types.js";

/**
 * - policy: one of the claims is a whole policy, the other anything on the same object;
 * - binding: two bindings of the same role and condition;
 * - member-of-binding: a member of a role and condition whose whole binding is claimed too;
 * - member: the same member (canonical identity) of the same role and condition, twice.
 */
export type ConflictKind = "policy" | "binding" | "member-of-binding" | "member";

type GrantClaim = Exclude<Claim, { scope: "policy" }>;

/** The role and condition of a grant claim (conditions compare by title, description, expression). */
function grantKey(c: GrantClaim): string {
  // A JSON string then the condition's key ("" or a JSON array): one reading, no array to build.
  return JSON.stringify(c.role) + conditionKey(c.condition);
}

/** Whether two claims conflict, and how; undefined when both can hold at once. */
export function claimsConflict(a: Claim, b: Claim): ConflictKind | undefined {
  if (a.object !== b.object) return undefined;
  if (a.scope === "policy" || b.scope === "policy") return "policy";
  if (grantKey(a) !== grantKey(b)) return undefined;
  if (a.scope === "binding" && b.scope === "binding") return "binding";
  if (a.scope === "member" && b.scope === "member")
    return memberKey(a.member) === memberKey(b.member) ? "member" : undefined;
  return "member-of-binding";
}

export interface Conflict<T> {
  kind: ConflictKind;
  /** Who holds the earlier claim. */
  owner: T;
  claim: Claim;
}

interface Entry<T> {
  owner: T;
  claim: Claim;
}

/** The claims on one object: a whole-policy claim, then by role and condition. */
interface ObjectClaims<T> {
  first: Entry<T>;
  policy?: Entry<T>;
  /** By role and condition: the binding claim and the member claims (by member key; made with
   *  the first member claim, most grants have none). */
  grants: Map<string, { binding?: Entry<T>; members?: Map<string, Entry<T>> }>;
}

/**
 * The claims of a stack, indexed by object, role and condition and member, so that a claim is
 * compared only with the few it could conflict with (constant work per claim).
 */
export class ClaimIndex<T> {
  private readonly objects = new Map<string, ObjectClaims<T>>();
  /** The claims last asked about, with each one's grant key and member key ("" when it has none):
   *  `hold` of the claims `conflict` was just asked about (the loader's and the plan's next call)
   *  does not compute them again. */
  private asked: readonly Claim[] | undefined;
  private readonly grantKeys: string[] = [];
  private readonly memberKeys: string[] = [];

  /** The first held claim that conflicts with one of `claims`; undefined when none does. */
  conflict(claims: readonly Claim[]): Conflict<T> | undefined {
    this.keysOf(claims);
    for (let i = 0; i < claims.length; i++) {
      const c = claims[i]!;
      for (const e of this.candidates(c, this.grantKeys[i]!, this.memberKeys[i]!)) {
        const kind = claimsConflict(e.claim, c);
        if (kind) return { kind, owner: e.owner, claim: e.claim };
      }
    }
    return undefined;
  }

  /** Records `owner`'s claims (call after `conflict` found none). */
  hold(claims: readonly Claim[], owner: T): void {
    this.keysOf(claims);
    for (let i = 0; i < claims.length; i++) {
      const claim = claims[i]!;
      const entry = { owner, claim };
      let o = this.objects.get(claim.object);
      if (!o) this.objects.set(claim.object, (o = { first: entry, grants: new Map() }));
      if (claim.scope === "policy") {
        o.policy ??= entry;
        continue;
      }
      const key = this.grantKeys[i]!;
      let g = o.grants.get(key);
      if (!g) o.grants.set(key, (g = {}));
      if (claim.scope === "binding") g.binding ??= entry;
      else {
        const members = (g.members ??= new Map());
        const k = this.memberKeys[i]!;
        if (!members.has(k)) members.set(k, entry);
      }
    }
  }

  /** Fills grantKeys and memberKeys for `claims` (claims are never changed once made). */
  private keysOf(claims: readonly Claim[]): void {
    if (this.asked === claims) return;
    this.asked = claims;
    this.grantKeys.length = 0;
    this.memberKeys.length = 0;
    for (const c of claims) {
      this.grantKeys.push(c.scope === "policy" ? "" : grantKey(c));
      this.memberKeys.push(c.scope === "member" ? memberKey(c.member) : "");
    }
  }

  /** The held claims `c` could conflict with (`key`: its grant key, `member`: its member key). */
  private candidates(c: Claim, key: string, member: string): Entry<T>[] {
    const o = this.objects.get(c.object);
    if (!o) return NONE;
    if (c.scope === "policy") return [o.first];
    const g = o.grants.get(key);
    const anyMember = c.scope === "binding" ? g?.members?.values().next().value : g?.members?.get(member);
    if (!o.policy && !g?.binding && !anyMember) return NONE;
    const out: Entry<T>[] = o.policy ? [o.policy] : [];
    if (g?.binding) out.push(g.binding);
    if (anyMember) out.push(anyMember);
    return out;
  }
}

/** No candidates (one array for all: only read). */
const NONE: never[] = [];

/**
 * What a conflict of the kinds the callers have no message of their own for (policy,
 * member-of-binding) says; `name` is the resource that claimed `claim` after `c.owner`.
 */
export function conflictSummary(c: Conflict<string>, name: string, claim: Claim): string {
  const both = `resources ${addressText(c.owner)} and ${addressText(name)} both manage`;
  if (c.kind === "policy") {
    const [whole, part] = c.claim.scope === "policy" ? [c.owner, name] : [name, c.owner];
    return (
      `${both} ${claim.object}: ${addressText(whole)} manages its whole IAM ` +
      `policy, so ${addressText(part)} cannot manage part of it`
    );
  }
  const [member, memberOwner, bindingOwner] =
    claim.scope === "member" ? [claim, name, c.owner] : [c.claim as GrantClaim, c.owner, name];
  const m = member.scope === "member" ? member.member : "";
  return (
    `${both} ${m} of role ${member.role} on ${claim.object}: ${addressText(bindingOwner)} manages ` +
    `the whole binding, ${addressText(memberOwner)} one member of it`
  );
}
