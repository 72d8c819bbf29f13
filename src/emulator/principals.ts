// Principal identifiers ("members") as Google accepts them in an allow policy, and which of them
// name the same principal. Written from Google's reference (google.iam.v1.Binding.members and the
// "Principal identifiers" page), independently of the client's rules in src/iam/: the end-to-end
// tests use the emulator as the oracle that catches a client bug there.
//
// Forms:
//   allUsers, allAuthenticatedUsers                      exact spelling
//   user:{email}, group:{email}, serviceAccount:{email}  the email compares case-insensitively
//   serviceAccount:{project}.svc.id.goog[{ns}/{ksa}]     a Kubernetes service account
//   domain:{domain}                                      a Google Workspace / Cloud Identity domain
//   principal://{host}/{path}, principalSet://{host}/{path}
//                                                        federated identities, case-sensitive; on
//                                                        iam.googleapis.com a workforce or workload
//                                                        identity pool followed by what it selects
//   deleted:{user|group|serviceAccount}:{email}?uid={id} a recently deleted principal
//   deleted:principal://…                                a deleted federated identity

const PRINCIPAL_FORMS =
  "allUsers, allAuthenticatedUsers, user:{email}, group:{email}, serviceAccount:{email}, " +
  "serviceAccount:{project}.svc.id.goog[{namespace}/{name}], domain:{domain}, principal://…, " +
  "principalSet://…, deleted:{user|group|serviceAccount}:{email}?uid={id}, deleted:principal://…";

const PUBLIC = new Set(["allUsers", "allAuthenticatedUsers"]);
const EMAIL_TYPES = new Set(["user", "group", "serviceAccount"]);

// A Kubernetes service account: {project ID}.svc.id.goog[{namespace}/{service account}].
const KUBERNETES_SA =
  /^[a-z][a-z0-9-]{4,28}[a-z0-9]\.svc\.id\.goog\[[a-z0-9]([a-z0-9-]*[a-z0-9])?\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?\]$/i;
// A DNS label: letters, digits and inner hyphens, at most 63 characters.
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
// Identity pools on iam.googleapis.com: workforce pools (global) and workload pools (per project).
const POOL = new RegExp(
  String.raw`^(?:locations\/global\/workforcePools|projects\/[0-9]+\/locations\/global\/workloadIdentityPoo` +
    String.raw`ls)\/[a-z0-9][a-z0-9.-]*\/(.+)$`,
);

/** Why `member` is not a principal identifier Google accepts in an allow policy; undefined when it is. */
export function principalProblem(member: unknown): string | undefined {
  if (typeof member !== "string" || member === "") return "a principal must be a non-empty string";
  if (/\p{Cs}/u.test(member)) return `${JSON.stringify(member)} is not valid Unicode`;
  if (/[\s\p{Cc}]/u.test(member)) return `"${member}" contains white space or a control character`;
  if (/\p{Cf}/u.test(member)) return `"${member}" contains an invisible format character`;
  if (PUBLIC.has(member)) return undefined;
  if (member.startsWith("principal://") || member.startsWith("principalSet://")) return federatedProblem(member);
  if (member.startsWith("deleted:")) return deletedProblem(member);
  const colon = member.indexOf(":");
  if (colon < 0) return `"${member}" has no principal type; expected one of ${PRINCIPAL_FORMS}`;
  const type = member.slice(0, colon);
  const value = member.slice(colon + 1);
  if (type === "serviceAccount" && KUBERNETES_SA.test(value)) return undefined;
  if (EMAIL_TYPES.has(type)) {
    const why = emailAddressProblem(value);
    return why ? `"${member}": "${value}" is not an email address: ${why}` : undefined;
  }
  if (type === "domain") return isDomainName(value) ? undefined : `"${member}": "${value}" is not a domain name`;
  return `"${member}" has an unknown principal type "${type}:"; expected one of ${PRINCIPAL_FORMS}`;
}

// An email address as Google's IAM takes it: RFC 5321's mailbox, {local part}@{domain}, with
// RFC 6531's letters, marks and digits beyond ASCII in either part. Lengths count UTF-16 units.
//   local part  a dot-atom (RFC 5322): atoms of atext, or of letters, marks and digits beyond
//               ASCII, joined by single dots; 1 to 64 characters; no quoted strings, no comments
//   domain      at least two labels, each 1 to 63 letters, marks, digits and hyphens, no hyphen
//               first or last; 253 characters at most; the last label not all digits (not an
//               address literal, not an IPv4 address)
const ATEXT_ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-";
const WORD_CHARACTER = /^[\p{L}\p{M}\p{N}]$/u;

/** A character of an atom: ASCII atext, or a letter, mark or digit beyond ASCII. */
function isAtomCharacter(c: string): boolean {
  return c.charCodeAt(0) < 0x80 ? ATEXT_ASCII.includes(c) : WORD_CHARACTER.test(c);
}

function localPartProblem(local: string): string | undefined {
  if (local.length === 0) return "the local part is empty";
  if (local.length > 64) return "the local part is over 64 characters";
  for (const atom of local.split(".")) {
    if (atom === "") return "the local part has a dot at its start or end, or two dots together";
    for (const c of atom) if (!isAtomCharacter(c)) return "the local part has a character outside RFC 5322's atext";
  }
  return undefined;
}

function emailDomainProblem(domain: string): string | undefined {
  if (domain.length > 253) return "the domain is over 253 characters";
  const labels = domain.split(".");
  if (labels.length < 2) return "the domain has a single label";
  for (const label of labels) {
    if (label === "") return "the domain has an empty label";
    if (label.length > 63) return "a label of the domain is over 63 characters";
    if (label.startsWith("-") || label.endsWith("-")) return "a label of the domain begins or ends with a hyphen";
    for (const c of label)
      if (c !== "-" && !WORD_CHARACTER.test(c))
        return "a label of the domain has a character other than a letter, digit or hyphen";
  }
  return /^[0-9]+$/.test(labels[labels.length - 1]!) ? "the top-level label of the domain is all digits" : undefined;
}

/** Why `s` is not an email address (see above); undefined when it is. */
function emailAddressProblem(s: string): string | undefined {
  const at = s.lastIndexOf("@");
  if (at < 0) return 'there is no "@"';
  return localPartProblem(s.slice(0, at)) ?? emailDomainProblem(s.slice(at + 1));
}

/** A fully qualified host name with an alphabetic top-level label, at most 253 characters. */
function isDomainName(s: string): boolean {
  const labels = s.split(".");
  return (
    s.length <= 253 &&
    labels.length >= 2 &&
    labels.every((l) => LABEL.test(l)) &&
    /^[a-z]{2,63}$/i.test(labels[labels.length - 1]!)
  );
}

function federatedProblem(member: string): string | undefined {
  const m = /^(principal|principalSet):\/\/([^/]+)\/(.+)$/.exec(member);
  const what = member.startsWith("principalSet:") ? "principal set" : "principal";
  if (!m) return `"${member}" is not a federated ${what} identifier ({scheme}://{host}/{path})`;
  const [, scheme, host, path] = m as unknown as [string, string, string, string];
  if (!host.split(".").every((l) => LABEL.test(l))) return `"${member}": "${host}" is not a host name`;
  if (host !== "iam.googleapis.com") return undefined;
  const pool = POOL.exec(path);
  if (!pool)
    return (
      `"${member}" names no workforce or workload identity pool (locations/global/workforcePools/{pool}/… ` +
      `or projects/{number}/locations/global/workloadIdentityPools/{pool}/…)`
    );
  const selector = pool[1]!;
  if (scheme === "principal")
    return /^subject\/.+$/.test(selector) ? undefined : `"${member}": a single identity is selected by subject/{value}`;
  return /^(\*|[A-Za-z][A-Za-z0-9_.]*\/.+)$/.test(selector)
    ? undefined
    : `"${member}": a principal set is selected by group/{id}, attribute.{name}/{value} or *`;
}

function deletedProblem(member: string): string | undefined {
  const rest = member.slice("deleted:".length);
  if (rest.startsWith("principal://")) return federatedProblem(rest);
  const m = /^(user|group|serviceAccount):([^?]*)\?uid=([0-9]+)$/.exec(rest);
  if (m && !emailAddressProblem(m[2]!)) return undefined;
  return (
    `"${member}" is not a deleted principal ` +
    `(deleted:{user|group|serviceAccount}:{email}?uid={id} or ` +
    `deleted:principal://…)`
  );
}

/**
 * The principal a (valid) identifier names: two identifiers with the same identity are one
 * principal. Emails, domains and Kubernetes service accounts compare case-insensitively (the type
 * prefix does not); public and federated identifiers compare exactly.
 */
export function principalIdentity(member: string): string {
  if (PUBLIC.has(member) || member.startsWith("principal://") || member.startsWith("principalSet://")) return member;
  const deleted = member.startsWith("deleted:") ? "deleted:" : "";
  const rest = member.slice(deleted.length);
  if (rest.startsWith("principal://")) return member;
  const colon = rest.indexOf(":");
  if (colon < 0) return member;
  return `${deleted}${rest.slice(0, colon)}:${rest.slice(colon + 1).toLowerCase()}`;
}

export function isPublicPrincipal(member: string): boolean {
  return PUBLIC.has(member);
}

/** A Google group (Google counts them against a limit of their own). */
export function isGoogleGroup(member: string): boolean {
  return member.startsWith("group:");
}
