// What Google refuses in an allow policy's members, the client refuses before any network call
// (SPEC section 1). A hostile tester found emails with a doubled or trailing dot and control
// characters (NUL, BEL, ESC) passing validate and plan, so that apply failed halfway on the server's
// INVALID_ARGUMENT. Each refusal names the member and says what is expected.
import { describe, expect, it } from "vitest";
import { isEmail, memberProblem } from "../../src/iam/members.js";

const POOL = "iam.googleapis.com/locations/global/workforcePools/staff";
const WORKLOAD = "iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github";

/** Members of every form that Google accepts (and the client accepted before): still accepted. */
const VALID = [
  "allUsers",
  "allAuthenticatedUsers",
  "user:alice@example.com",
  "user:Alice.Smith@Example.COM",
  "user:a+tag@mail.example.co.uk",
  "user:o'brien@example.com",
  "user:first_last-1@sub-domain.example.com",
  "user:a@b.c",
  "user:zoë@exämple.com",
  "group:sre@example.com",
  "serviceAccount:my-sa@my-project.iam.gserviceaccount.com",
  "serviceAccount:123456789012-compute@developer.gserviceaccount.com",
  "serviceAccount:service-123@gcp-sa-aiplatform.iam.gserviceaccount.com",
  // Kubernetes service accounts (Workload Identity Federation for GKE): {project}.svc.id.goog[{namespace}/{name}]
  "serviceAccount:my-proj.svc.id.goog[default/my-ksa]",
  "serviceAccount:my-project-123.svc.id.goog[kube-system/a]",
  "serviceAccount:abcdef.svc.id.goog[n/sa.with.dots]",
  `serviceAccount:a${"b".repeat(28)}c.svc.id.goog[${"n".repeat(63)}/` +
    `${["k".repeat(63), "k".repeat(63), "k".repeat(63), "k".repeat(61)].join(".")}]`, // 253 characters
  "domain:example.com",
  "domain:Example.COM",
  "domain:a-b.example.co",
  "deleted:user:alice@example.com?uid=123456789012345678901",
  "deleted:serviceAccount:sa@p.iam.gserviceaccount.com?uid=9",
  "deleted:group:g@example.com?uid=1",
  `principal://${POOL}/subject/Alice`,
  `principal://${WORKLOAD}/subject/repo:octo/app:ref:refs/heads/main`,
  `principalSet://${POOL}/group/admins`,
  `principalSet://${POOL}/attribute.department/eng`,
  `principalSet://${POOL}/*`,
  `principalSet://${WORKLOAD}/*`,
  "principalSet://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/" +
    "my-project.svc.id.goog/namespace/prod",
  "principalSet://cloudresourcemanager.googleapis.com/projects/123456789012/type/ServiceAccount",
  `deleted:principal://${POOL}/subject/alice`,
];

/** [member, what the message must say]. */
const INVALID: [string, RegExp][] = [
  // emails: the hostile tester's cases
  [
    "user:a@b..com",
    /"user:a@b\.\.com": what follows "user:" is not an email address: the domain has an empty label.*expected/,
  ],
  ["user:a@b.com.", /not an email address: the domain has an empty label/],
  ["user:x\u001b[2J@example.com", /not an email address: it contains a control character \(U\+001B\)/],
  ["group:s\u0000re@example.com", /control character \(U\+0000\)/],
  ["user:a\u0007@example.com", /control character \(U\+0007\)/],
  ["group:sre@example.com\u001b[2J\u001b[31mEVIL", /control character \(U\+001B\)/],
  ["user:a\u007f@example.com", /control character \(U\+007F\)/],
  ["user:a\u009b@example.com", /control character \(U\+009B\)/],
  ["user:a\u00a0b@example.com", /white space \(U\+00A0\)/],
  ["user:a\u200bb@example.com", /format character \(U\+200B\)/],
  ["user:a\u202eb@example.com", /format character \(U\+202E\)/],
  ["user:a\u2028b@example.com", /white space \(U\+2028\)/],
  // emails: the domain
  ["user:a@.example.com", /the domain has an empty label/],
  ["user:a@example", /the domain has no dot/],
  ["user:a@-example.com", /starts or ends with a hyphen/],
  ["user:a@example-.com", /starts or ends with a hyphen/],
  ["user:a@exa_mple.com", /letters, digits and hyphens/],
  ["user:a@exa/mple.com", /letters, digits and hyphens/],
  ["user:a@[10.0.0.1]", /letters, digits and hyphens|no dot/],
  ["user:a@example.123", /last label is all digits/],
  [`user:a@${"x".repeat(64)}.com`, /the domain has a label longer than 63 characters/],
  [`user:a@${Array.from({ length: 51 }, () => "abcd").join(".")}.com`, /the domain is longer than 253 characters/],
  // emails: the part before @
  ["user:@example.com", /the part before "@" is empty/],
  ["user:a@b@example.com", /more than one "@"/],
  ["user:example.com", /it has no "@"/],
  ["user:.a@example.com", /starts or ends with a dot, or has two dots in a row/],
  ["user:a.@example.com", /starts or ends with a dot, or has two dots in a row/],
  ["user:a..b@example.com", /starts or ends with a dot, or has two dots in a row/],
  ["user:a(b)@example.com", /the part before "@" has a character other than/],
  ['user:"a"@example.com', /the part before "@" has a character other than/],
  ["user:a<b>@example.com", /the part before "@" has a character other than/],
  [`user:${"a".repeat(65)}@example.com`, /the part before "@" is longer than 64 characters/],
  // Kubernetes service accounts: the project ID, the namespace (a DNS label), the name (a DNS subdomain)
  [
    "serviceAccount:my-proj.svc.id.goog[default/my-ksa",
    /not a Kubernetes service account.*expected serviceAccount:\{project\}\.svc\.id\.goog\[\{namespace\}\/\{name\}\]/,
  ],
  ["serviceAccount:my-proj.svc.id.goog[default]", /not a Kubernetes service account/],
  ["serviceAccount:my-proj.svc.id.goog[default/a/b]", /not a Kubernetes service account/],
  ["serviceAccount:my-proj.svc.id.goog[/my-ksa]", /the namespace is not a DNS label/],
  ["serviceAccount:my-proj.svc.id.goog[Default/my-ksa]", /the namespace is not a DNS label/],
  ["serviceAccount:my-proj.svc.id.goog[de.fault/my-ksa]", /the namespace is not a DNS label/],
  ["serviceAccount:my-proj.svc.id.goog[-default/my-ksa]", /the namespace is not a DNS label/],
  [`serviceAccount:my-proj.svc.id.goog[${"n".repeat(64)}/my-ksa]`, /the namespace is not a DNS label/],
  ["serviceAccount:my-proj.svc.id.goog[default/]", /the name is not a DNS subdomain/],
  ["serviceAccount:my-proj.svc.id.goog[default/My-KSA]", /the name is not a DNS subdomain/],
  ["serviceAccount:my-proj.svc.id.goog[default/a..b]", /the name is not a DNS subdomain/],
  ["serviceAccount:my-proj.svc.id.goog[default/my_ksa]", /the name is not a DNS subdomain/],
  ["serviceAccount:my-proj.svc.id.goog[default/my-ksa-]", /the name is not a DNS subdomain/],
  [
    `serviceAccount:my-proj.svc.id.goog[default/` +
      `${["k".repeat(63), "k".repeat(63), "k".repeat(63), "k".repeat(62)].join(".")}]`,
    /the name is not a DNS subdomain/,
  ],
  ["serviceAccount:abcde.svc.id.goog[default/my-ksa]", /the project is not a project ID/],
  [`serviceAccount:a${"b".repeat(29)}c.svc.id.goog[default/my-ksa]`, /the project is not a project ID/],
  ["serviceAccount:1my-proj.svc.id.goog[default/my-ksa]", /the project is not a project ID/],
  ["serviceAccount:my-proj-.svc.id.goog[default/my-ksa]", /the project is not a project ID/],
  ["serviceAccount:My-Proj.svc.id.goog[default/my-ksa]", /the project is not a project ID/],
  ["serviceAccount:example.com:my-proj.svc.id.goog[default/my-ksa]", /the project is not a project ID/],
  ["serviceAccount:my-proj.svc.id.goog[default/my-ksa]x", /not a Kubernetes service account/],
  ["user:my-proj.svc.id.goog[default/my-ksa]", /not an email address/],
  ["group:my-proj.svc.id.goog[default/my-ksa]", /not an email address/],
  ["serviceAccount:my-proj.svc.id.goog[default/my\u0000ksa]", /control character \(U\+0000\)/],
  // domain:
  [
    "domain:example..com",
    /"domain:example\.\.com": what follows "domain:" is not a domain name: it has an empty label.*expected/,
  ],
  ["domain:example.com.", /not a domain name: it has an empty label/],
  ["domain:.example.com", /not a domain name: it has an empty label/],
  ["domain:example", /not a domain name: it has no dot/],
  ["domain:exa_mple.com", /letters, digits and hyphens/],
  ["domain:example.c0m", /last label is not 2 to 63 letters/],
  ["domain:exämple.com", /letters, digits and hyphens/],
  ["domain:ex\u0000ample.com", /control character \(U\+0000\)/],
  // deleted:
  ["deleted:user:a@b..com?uid=1", /not a valid deleted principal.*the domain has an empty label/],
  ["deleted:user:a\u001b@b.com?uid=1", /not a valid deleted principal.*control character \(U\+001B\)/],
  ["deleted:user:a@b.com", /not a valid deleted principal/],
  ["deleted:user:a@b.com?uid=", /not a valid deleted principal/],
  ["deleted:principalSet://" + POOL + "/*", /not a valid deleted principal/],
  // principal:// and principalSet://
  ["principal://", /not a valid principal identifier/],
  [`principal://${POOL}/subject/`, /not a valid principal identifier.*subject\/\{value\}/],
  [`principal://${POOL}/group/admins`, /not a valid principal identifier.*subject\/\{value\}/],
  [`principalSet://${POOL}/subject`, /not a valid principalSet identifier.*group\/\{id\}/],
  [`principalSet://${POOL}/attribute./x`, /not a valid principalSet identifier/],
  [
    "principal://iam.googleapis.com/locations/global/workforcePools/Staff/subject/a",
    /workforce or workload identity pool/,
  ],
  ["principal://iam.googleapis.com/foo/subject/a", /workforce or workload identity pool/],
  ["principal://iam..googleapis.com/x", /not a valid principal identifier: the host has an empty label/],
  ["principal://iam.googleapis.com./x", /the host has an empty label/],
  ["principal://-iam.example.com/x", /the host.*starts or ends with a hyphen/],
  ["principal://iam_x.example.com/x", /the host.*letters, digits and hyphens/],
  ["principal://example.com", /\{scheme\}:\/\/\{host\}\/\{path\}/],
  ["principal://example.com/", /\{scheme\}:\/\/\{host\}\/\{path\}/],
  [`principal://${POOL}/subject/a\u0000b`, /control character \(U\+0000\)/],
  [`principal://${POOL}/subject/a\u001bb`, /control character \(U\+001B\)/],
  [`principalSet://${POOL}/group/a\u0007`, /control character \(U\+0007\)/],
];

describe("memberProblem: members Google refuses", () => {
  it.each(INVALID)("refuses %j", (member, message) => {
    const p = memberProblem(member);
    expect(p, JSON.stringify(member)).toBeDefined();
    expect(p).toMatch(message);
  });

  it("names the member and says what is expected", () => {
    expect(memberProblem("user:a@b..com")).toMatch(/^member "user:a@b\.\.com": .*; expected user:\{name\}@\{domain\}/);
    expect(memberProblem("domain:a..b")).toMatch(/; expected domain:\{domain\}/);
  });

  it("quotes no part of the member in the reason (a secret member is shown only as a whole, redacted)", () => {
    for (const [member] of INVALID) {
      const p = memberProblem(member)!;
      const reason = p.slice(p.indexOf(member) + member.length).split("; expected")[0]!;
      for (const part of member
        .split(/[@.:/]/)
        .filter(
          (x) =>
            x.length >= 4 &&
            !new RegExp(
              String.raw`^(user|group|domain|deleted|principal|principalSet|serviceAccount|example|com|google` +
                String.raw`apis|iam|locations|global|workforcePools|staff|subject|attribute|group)$`,
            ).test(x),
        )) {
        expect(reason, `${JSON.stringify(member)} → ${p}`).not.toContain(part);
      }
    }
  });

  it("isEmail refuses what it refuses for user:", () => {
    for (const s of ["a@b..com", "a@b.com.", "a\u001b@b.com", "a\u0000@b.com", ".a@b.com", "a@-b.com"])
      expect(isEmail(s), JSON.stringify(s)).toBe(false);
  });

  it("answers at once for very long members", () => {
    const t = Date.now();
    expect(memberProblem(`user:a@${"x".repeat(200_000)}.com`)).toMatch(/longer than/);
    expect(memberProblem(`user:${"a.".repeat(100_000)}@b.com`)).toMatch(/longer than/);
    expect(memberProblem(`principal://${"a.".repeat(100_000)}b/x`)).toMatch(/longer than/);
    expect(memberProblem(`principalSet://${POOL}/${"a.".repeat(100_000)}/x`)).toBeDefined();
    // Backtracking over 200,000 characters would take minutes; the margin is for a loaded machine.
    expect(Date.now() - t).toBeLessThan(30_000);
  });
});

describe("memberProblem: members Google accepts", () => {
  it.each(VALID)("accepts %s", (member) => {
    expect(memberProblem(member)).toBeUndefined();
  });
});

describe("the common-case shortcut of the email check", () => {
  it("accepts only what the full check accepts (random near-emails)", async () => {
    const { emailProblem, emailProblemInFull } = await import("../../src/iam/member-rules.js");
    let seed = 12345;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    const alphabet = [
      "a",
      "Z",
      "0",
      "9",
      "-",
      ".",
      "_",
      "+",
      "@",
      "'",
      "é",
      " ",
      "\u0000",
      "..",
      "-.",
      ".-",
      "x".repeat(63),
      "y".repeat(64),
      "1",
    ];
    let agreed = 0;
    for (let i = 0; i < 50_000; i++) {
      let s = "";
      const parts = 1 + rnd(12);
      for (let j = 0; j < parts; j++) s += alphabet[rnd(alphabet.length)];
      if (rnd(2))
        s +=
          "@" +
          ["example.com", "a.b", "x-.com", "-x.com", "a..b", "1.2", "a.12", "b.c3", "z".repeat(64) + ".com"][rnd(9)];
      const fast = emailProblem(s) === undefined;
      const full = emailProblemInFull(s) === undefined;
      if (fast) expect(full, s).toBe(true);
      if (fast === full) agreed++;
    }
    expect(agreed).toBe(50_000);
  });
});
