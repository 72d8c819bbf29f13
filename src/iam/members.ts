// Member (principal) forms, validation and the comparison key that prevents permanent diffs.

import {
  domainProblem,
  emailProblem,
  federatedProblem,
  isKubernetesServiceAccountForm,
  kubernetesServiceAccountProblem,
} from "./member-rules.js";

export { isEmail } from "./member-rules.js";

const EMAIL_PREFIXES = ["user", "serviceAccount", "group"] as const;
/** Principals whose identifiers are compared exactly (they are not email addresses). */
const EXACT_PREFIXES = ["principal://", "principalSet://"];
const PUBLIC = ["allUsers", "allAuthenticatedUsers"] as const;

const MEMBER_FORMS =
  "user:{email}, serviceAccount:{email}, serviceAccount:{project}.svc.id.goog[{namespace}/{name}], " +
  "group:{email}, domain:{domain}, allUsers, allAuthenticatedUsers, principal://…, principalSet://… (or " +
  "deleted:{user|serviceAccount|group}:{email}?uid={n}, deleted:principal://…)";

/** A lone UTF-16 surrogate: text that is not valid Unicode (Google refuses it). */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const KUBERNETES_EXPECTED =
  "serviceAccount:{project}.svc.id.goog[{namespace}/{name}], e.g. serviceAccount:my-proj.svc.id.goog[default/my-ksa]";

const FEDERATED_EXPECTED =
  "{scheme}://{host}/{path}, e.g. " +
  "principal://iam.googleapis.com/locations/global/workforcePools/{pool}/subject/{value} or " +
  "principalSet://…/group/{id}";

/** Why a deleted member (deleted:{type}:{email}?uid={n} or deleted:principal://…) is refused, or undefined. */
function deletedProblem(member: string, rest: string): string | undefined {
  const what = `member "${member}" is not a valid deleted principal`;
  const expected = "expected deleted:{user|serviceAccount|group}:{email}?uid={n} or deleted:principal://…";
  if (rest.startsWith("principal://")) {
    const p = federatedProblem(rest);
    return p ? `${what}: ${p}; ${expected}` : undefined;
  }
  const m = /^(user|serviceAccount|group):([^?]*)\?uid=[0-9]+$/.exec(rest);
  if (!m) return `${what}; ${expected}`;
  const p = emailProblem(m[2]!);
  return p ? `${what}: the email: ${p}; ${expected}` : undefined;
}

/** Returns why `member` is not an accepted IAM member, or undefined when it is. */
export function memberProblem(member: string): string | undefined {
  if (typeof member !== "string" || member.length === 0) return "a member must be a non-empty string";
  if (LONE_SURROGATE.test(member)) return `member ${JSON.stringify(member)} is not valid Unicode`;
  if (member !== member.trim()) return `member "${member}" has leading or trailing white space`;
  if (isPublicMember(member)) return undefined;
  for (const p of EXACT_PREFIXES) {
    if (member.startsWith(p)) {
      const why = federatedProblem(member);
      return why
        ? `member "${member}" is not a valid ${p.slice(0, -3)} identifier: ${why}; expected ${FEDERATED_EXPECTED}`
        : undefined;
    }
  }
  const colon = member.indexOf(":");
  if (colon < 0) return `member "${member}" has no type prefix; expected one of ${MEMBER_FORMS}`;
  const prefix = member.slice(0, colon);
  const rest = member.slice(colon + 1);
  if (prefix === "deleted") return deletedProblem(member, rest);
  if (prefix === "serviceAccount" && isKubernetesServiceAccountForm(rest)) {
    const why = kubernetesServiceAccountProblem(rest);
    return why
      ? `member "${member}": what follows "serviceAccount:" is not a Kubernetes ` +
          `service account: ${why}; expected ${KUBERNETES_EXPECTED}`
      : undefined;
  }
  if ((EMAIL_PREFIXES as readonly string[]).includes(prefix)) {
    const why = emailProblem(rest);
    return why
      ? `member "${member}": what follows "${prefix}:" is not an email ` +
          `address: ${why}; expected ${prefix}:{name}@{domain}`
      : undefined;
  }
  if (prefix === "domain") {
    const why = domainProblem(rest);
    return why
      ? `member "${member}": what follows "${prefix}:" is not a domain name: ${why}; expected domain:{domain}`
      : undefined;
  }
  return `member "${member}" has unknown type "${prefix}:"; expected one of ${MEMBER_FORMS}`;
}

export function isPublicMember(member: string): boolean {
  return (PUBLIC as readonly string[]).includes(member);
}

/**
 * The comparison key of a member: the identifier after the type prefix is case-insensitive for
 * email and domain forms (Google stores them lower-cased), exact for everything else. A deleted
 * email form keeps that rule for its email (its ?uid= exact); a deleted principal:// is exact.
 */
export function memberKey(member: string): string {
  if (isPublicMember(member)) return member;
  if (member.startsWith("principal") && EXACT_PREFIXES.some((p) => member.startsWith(p))) return member;
  const colon = member.indexOf(":");
  if (colon < 0) return member;
  const prefix = member.slice(0, colon);
  if (prefix === "deleted") {
    if (member.startsWith("deleted:principal://")) return member;
    const q = member.indexOf("?");
    return q < 0
      ? member.toLowerCase()
      : member
          .slice(0, q)
          .toLowerCase()
          .replace(/^deleted:serviceaccount:/, "deleted:serviceAccount:") + member.slice(q);
  }
  const rest = member.slice(colon + 1);
  const lower = rest.toLowerCase();
  // Already lower-case (the usual case): the member itself, not a new copy of it.
  return lower === rest ? member : `${prefix}:${lower}`;
}

/** The first spelling of each member, by key, in the order given. */
function firstByKey(members: readonly string[]): Map<string, string> {
  const seen = new Map<string, string>();
  for (const m of members) {
    const k = memberKey(m);
    if (!seen.has(k)) seen.set(k, m);
  }
  return seen;
}

/** Members deduplicated by key, keeping the first spelling and the given order. */
export function dedupeMembers(members: readonly string[]): string[] {
  return [...firstByKey(members).values()];
}

/** Whether the members' keys are strictly increasing (no duplicates, already in normal order). */
function sortedByKey(members: readonly string[]): boolean {
  let previous: string | undefined;
  for (const m of members) {
    const k = memberKey(m);
    if (previous !== undefined && !(previous < k)) return false;
    previous = k;
  }
  return true;
}

/** Members deduplicated by key, keeping the first spelling, sorted by key. */
function sortByKey(members: readonly string[]): string[] {
  return [...firstByKey(members).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, m]) => m);
}

/** Members deduplicated by key, keeping the first spelling, in a stable sorted order. */
export function normalizeMembers(members: readonly string[]): string[] {
  // Usually written sorted and without duplicates already: then the list is its own normal form.
  return sortedByKey(members) ? [...members] : sortByKey(members);
}

/** normalizeMembers for a list the caller has just made and owns: the list itself when it is
 *  already in normal form (no copy). */
export function normalizeOwnMembers(members: string[]): string[] {
  return sortedByKey(members) ? members : sortByKey(members);
}

/** The same members in the same order and spelling: the same set, without computing a member key
 *  (the usual no-op). */
export function sameMembersAsWritten(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when the two lists hold the same members (by key), whatever their order and case. */
export function sameMemberSet(a: readonly string[], b: readonly string[]): boolean {
  const ka = new Set(a.map(memberKey));
  const kb = new Set(b.map(memberKey));
  if (ka.size !== kb.size) return false;
  for (const k of ka) if (!kb.has(k)) return false;
  return true;
}
