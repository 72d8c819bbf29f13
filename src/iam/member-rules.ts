// The forms of a member (principal identifier) Google accepts in an allow policy, checked before
// any network call: a member Google refuses must fail `validate`, never `apply` halfway (SPEC
// section 1). Written from Google's "Principal identifiers" reference and RFC 5321/1123 for emails
// and host names; the emulator has rules of its own (the differential test checks that this one
// never accepts what the emulator refuses, and that the two agree both ways on emails and domains). Each reason
// describes what is wrong without quoting a
// part of the member: a member computed from a secret is shown redacted, as a whole.

/** White space, control characters (C0, DEL, C1) and invisible format characters (zero-width
 *  space, bidi overrides, BOM): in no member. */
const BAD_CHARACTER = /[\s\p{Cc}\p{Cf}]/u;

/** Why `s` holds a character no member may hold, or undefined. */
function badCharacter(s: string): string | undefined {
  const m = BAD_CHARACTER.exec(s);
  if (!m) return undefined;
  const c = m[0];
  const code = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  const what = /\p{Cc}/u.test(c)
    ? "a control character"
    : /\s/.test(c)
      ? "white space"
      : "an invisible format character";
  return `it contains ${what} (${code})`;
}

/** The characters of an email's local part: RFC 5322 atext and dots, or letters, marks and digits
 *  beyond ASCII (internationalised addresses). */
const LOCAL_CHARS = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\-\u0080-\uffff]+$/;
const NON_ASCII_OK = /^[\p{L}\p{M}\p{N}]$/u;

function localPartProblem(local: string): string | undefined {
  if (local === "") return 'the part before "@" is empty';
  if (local.length > 64) return 'the part before "@" is longer than 64 characters';
  if (!LOCAL_CHARS.test(local) || [...local].some((c) => c > "\u007f" && !NON_ASCII_OK.test(c))) {
    return 'the part before "@" has a character other than letters, digits, dots and !#$%&\'*+-/=?^_`{|}~';
  }
  if (local.startsWith(".") || local.endsWith(".") || local.includes(".."))
    return 'the part before "@" starts or ends with a dot, or has two dots in a row';
  return undefined;
}

interface HostRule {
  /** What the text is called in a reason ("the domain", "it", "the host"). */
  what: string;
  /** Whether it needs a dot (at least two labels). */
  dotted: boolean;
  /** Letters, marks and digits beyond ASCII allowed in a label (an email's domain). */
  international: boolean;
  /** The rule for the last label, if any. */
  last?: (label: string) => string | undefined;
}

const ASCII_LABEL = /^[A-Za-z0-9-]+$/;
const INTERNATIONAL_LABEL = /^[\p{L}\p{M}\p{N}-]+$/u;

/** Why `host` is not a host name by RFC 1123 (dot-separated labels of letters, digits and inner
 *  hyphens, each 1–63 characters, 253 in all), or undefined. */
function hostProblem(host: string, rule: HostRule): string | undefined {
  const { what } = rule;
  if (host === "") return `${what} is empty`;
  if (host.length > 253) return `${what} is longer than 253 characters`;
  const labels = host.split(".");
  if (labels.some((l) => l === "")) return `${what} has an empty label (a leading, trailing or doubled dot)`;
  if (rule.dotted && labels.length < 2) return `${what} has no dot`;
  const letters = rule.international ? INTERNATIONAL_LABEL : ASCII_LABEL;
  for (const l of labels) {
    if (l.length > 63) return `${what} has a label longer than 63 characters`;
    if (!letters.test(l)) return `${what} has a label with a character other than letters, digits and hyphens`;
    if (l.startsWith("-") || l.endsWith("-")) return `${what} has a label that starts or ends with a hyphen`;
  }
  return rule.last?.(labels[labels.length - 1]!);
}

const EMAIL_DOMAIN: HostRule = {
  what: "the domain",
  dotted: true,
  international: true,
  last: (l) => (/^[0-9]+$/.test(l) ? "the domain's last label is all digits" : undefined),
};

/** The common case, accepted in one match: ASCII dot-atoms before "@", a domain of ASCII labels
 *  of 1–63 letters, digits and inner hyphens. Accepts only what the full check below accepts
 *  (test/iam/member-rules.test.ts compares them); everything else takes the full check. */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const PLAIN_EMAIL = new RegExp(`^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${LABEL}$`);

function plainEmail(s: string): boolean {
  const at = s.indexOf("@");
  return at <= 64 && s.length - at - 1 <= 253 && PLAIN_EMAIL.test(s) && !/\.[0-9]+$/.test(s);
}

/** Why `s` is not an email address Google accepts ({name}@{domain}), or undefined. */
export function emailProblem(s: string): string | undefined {
  if (plainEmail(s)) return undefined;
  return emailProblemInFull(s);
}

/** The full check, without the common case's shortcut (exported for the test comparing them). */
export function emailProblemInFull(s: string): string | undefined {
  const bad = badCharacter(s);
  if (bad) return bad;
  const at = s.indexOf("@");
  if (at < 0) return 'it has no "@"';
  if (s.indexOf("@", at + 1) >= 0) return 'it has more than one "@"';
  return localPartProblem(s.slice(0, at)) ?? hostProblem(s.slice(at + 1), EMAIL_DOMAIN);
}

/** {name}@{domain}: see emailProblem. */
export function isEmail(s: string): boolean {
  return emailProblem(s) === undefined;
}

const DOMAIN: HostRule = {
  what: "it",
  dotted: true,
  international: false,
  last: (l) => (/^[A-Za-z]{2,63}$/.test(l) ? undefined : "its last label is not 2 to 63 letters"),
};

/** Why `s` is not a domain name (a Google Workspace or Cloud Identity domain), or undefined. */
export function domainProblem(s: string): string | undefined {
  return badCharacter(s) ?? hostProblem(s, DOMAIN);
}

// A Kubernetes service account (Workload Identity Federation for GKE):
// {project}.svc.id.goog[{namespace}/{name}], the project's workload identity pool, a Kubernetes
// namespace (an RFC 1123 DNS label) and a service account name (an RFC 1123 DNS subdomain), as
// Kubernetes names them: lower case. The project ID is Google's: 6–30 lower-case letters, digits
// and hyphens, starting with a letter, not ending with a hyphen. A domain-scoped project
// (example.com:my-proj) is not accepted: Google documents no pool name for one.
const KUBERNETES_SA = /^([^[\]]*)\.svc\.id\.goog\[([^/[\]]*)\/([^/[\]]*)\]$/;
const PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Whether a serviceAccount: member's value is meant as a Kubernetes service account (it has a
 *  "[" and no "@"), to be checked by kubernetesServiceAccountProblem rather than as an email. */
export function isKubernetesServiceAccountForm(s: string): boolean {
  return s.includes("[") && !s.includes("@");
}

/** Why `s` is not {project}.svc.id.goog[{namespace}/{name}] as Google accepts it, or undefined. */
export function kubernetesServiceAccountProblem(s: string): string | undefined {
  const bad = badCharacter(s);
  if (bad) return bad;
  const m = KUBERNETES_SA.exec(s);
  if (!m) return "it is not {project}.svc.id.goog[{namespace}/{name}]";
  const [, project, namespace, name] = m as unknown as [string, string, string, string];
  if (!PROJECT_ID.test(project))
    return (
      "the project is not a project ID (6 to 30 lower-case letters, digits and " +
      "hyphens, starting with a letter, not ending with a hyphen)"
    );
  if (!DNS_LABEL.test(namespace))
    return "the namespace is not a DNS label (1 to 63 lower-case letters, digits and inner hyphens)";
  if (name.length > 253 || !name.split(".").every((l) => DNS_LABEL.test(l))) {
    return (
      "the name is not a DNS subdomain (dot-separated labels of lower-case " +
      "letters, digits and inner hyphens, 253 characters at most)"
    );
  }
  return undefined;
}

const HOST: HostRule = { what: "the host", dotted: false, international: false };

// On iam.googleapis.com: a workforce pool (global) or a workload pool (per project number), the
// pool ID lower-case dot-separated labels (a GKE pool is {project}.svc.id.goog).
const IAM_POOL =
  /^(?:locations\/global\/workforcePools|projects\/[0-9]+\/locations\/global\/workloadIdentityPools)\/([^/]*)\/(.*)$/;
const POOL_ID = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;
// What a principal set selects: group/{id}, attribute.{name}/{value}, namespace/{ns}, … or *.
const SET_SELECTOR = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\/./;
const POOL_FORMS =
  "locations/global/workforcePools/{pool}/… or projects/{number}/locations/global/workloadIdentityPools/{pool}/…";

function iamPathProblem(set: boolean, path: string): string | undefined {
  const m = IAM_POOL.exec(path);
  if (!m || !POOL_ID.test(m[1]!) || m[1]!.length > 253)
    return `it names no workforce or workload identity pool (${POOL_FORMS})`;
  const selector = m[2]!;
  if (!set) return /^subject\/./.test(selector) ? undefined : "a single identity is selected by subject/{value}";
  return selector === "*" || SET_SELECTOR.test(selector)
    ? undefined
    : "a principal set is selected by group/{id}, attribute.{name}/{value} or *";
}

/** Why `member` (principal://… or principalSet://…) is not a federated identifier, or undefined. */
export function federatedProblem(member: string): string | undefined {
  const set = member.startsWith("principalSet://");
  const rest = member.slice(set ? "principalSet://".length : "principal://".length);
  const bad = badCharacter(rest);
  if (bad) return bad;
  const slash = rest.indexOf("/");
  if (slash < 0 || slash === rest.length - 1 || rest[slash + 1] === "/") return "it is not {scheme}://{host}/{path}";
  const host = rest.slice(0, slash);
  const hp = hostProblem(host, HOST);
  if (hp) return hp;
  return host === "iam.googleapis.com" ? iamPathProblem(set, rest.slice(slash + 1)) : undefined;
}
