// Differential test: the client's member rule (src/iam/members.ts) against the emulator's
// (src/emulator/principals.ts), written independently from Google's reference. The emulator's
// function is used here, in the test only. What it asserts:
//   1. every form: the client never lets through a member the server refuses (whatever
//      memberProblem accepts, principalProblem accepts too);
//   2. emails (user:, group:, serviceAccount:{email}, deleted:{type}:{email}?uid=), domains
//      (domain:) and the public members: the two agree both ways, so the emulator refuses what
//      Google refuses there, as the client does. Federated identifiers and Kubernetes service
//      accounts are left one way: the emulator checks their structure only, the client more
//      (pool ID syntax, lower-case Kubernetes names), and Google's full rule is not documented.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { principalProblem } from "../../src/emulator/principals.js";
import { memberProblem } from "../../src/iam/members.js";

const POOLS = [
  "iam.googleapis.com/locations/global/workforcePools/staff",
  "iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github",
  "iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p.svc.id.goog",
];

/** Awkward characters: separators, dots, controls, white space, format characters, non-ASCII. */
const AWKWARD = [
  "a",
  "B",
  "z",
  "0",
  "9",
  "-",
  "_",
  ".",
  "..",
  "@",
  ":",
  "/",
  "?",
  "=",
  "*",
  "[",
  "]",
  "+",
  "'",
  '"',
  "(",
  " ",
  "\t",
  "\n",
  "\r",
  "\u0000",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u009b",
  "\u00a0",
  "\u200b",
  "\u202e",
  "\u2028",
  "\ufeff",
  "é",
  "ß",
  "\u212a",
  "İ",
  "\ud800",
  "\udc00",
  "😀",
];

const word = fc.constantFrom(
  "a",
  "b",
  "x",
  "sa",
  "example",
  "co",
  "gserviceaccount",
  "iam",
  "subject",
  "group",
  "attribute.dept",
  "uid",
  "goog",
  "Z9",
);
const chunk = fc.oneof(
  { weight: 4, arbitrary: word },
  { weight: 3, arbitrary: fc.constantFrom(...AWKWARD) },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 3 }) },
);
const text = (max: number) => fc.array(chunk, { maxLength: max }).map((cs) => cs.join(""));

const prefix = fc.constantFrom(
  "user:",
  "group:",
  "serviceAccount:",
  "domain:",
  "deleted:user:",
  "deleted:group:",
  "deleted:serviceAccount:",
  "principal://",
  "principalSet://",
  "deleted:principal://",
  ...POOLS.flatMap((p) => [
    `principal://${p}/`,
    `principalSet://${p}/`,
    `deleted:principal://${p}/`,
    `principal://${p}/subject/`,
    `principalSet://${p}/group/`,
  ]),
  "",
  "User:",
  "allUsers",
);

/** Near-valid members: a valid form with pieces mutated, to reach deep into each rule. */
const email = fc
  .tuple(
    text(4),
    fc.constantFrom("@", "@@", ""),
    text(4),
    fc.constantFrom(".", "..", ""),
    text(3),
    fc.constantFrom("", ".", "?uid=1", "?uid="),
  )
  .map((p) => p.join(""));
/** Near-valid Kubernetes service accounts: serviceAccount:{project}.svc.id.goog[{namespace}/{name}]. */
const kubernetesWord = fc.constantFrom(
  "my-proj",
  "abcdef",
  "a1-b2-c3",
  "default",
  "kube-system",
  "ksa",
  "a.b",
  "-",
  ".",
  "..",
  "Ab",
  "x".repeat(30),
  "y".repeat(63),
);
const kubernetesPart = fc.oneof(
  { weight: 4, arbitrary: kubernetesWord },
  { weight: 1, arbitrary: text(2) },
  { weight: 1, arbitrary: fc.array(kubernetesWord, { maxLength: 3 }).map((ws) => ws.join("")) },
);
const kubernetesSa = fc
  .tuple(
    fc.constantFrom("serviceAccount:", "deleted:serviceAccount:", "user:"),
    kubernetesPart,
    fc.constantFrom(".svc.id.goog", ".svc.id.goog.", ".svc.goog", ""),
    fc.constantFrom("[", "", "[["),
    kubernetesPart,
    fc.constantFrom("/", "", "//"),
    kubernetesPart,
    fc.constantFrom("]", "", "]]", "]?uid=1"),
  )
  .map((p) => p.join(""));

const member = fc.oneof(
  kubernetesSa,
  fc.tuple(prefix, text(8)).map(([p, t]) => p + t),
  fc.tuple(prefix, email).map(([p, e]) => p + e),
  fc
    .tuple(
      fc.constantFrom("user:", "group:", "serviceAccount:", "domain:", "deleted:user:"),
      text(3),
      fc.constantFrom("@", ""),
      text(3),
      fc.constantFrom(".", "-"),
      text(2),
      fc.constantFrom("", "?uid=7"),
    )
    .map((p) => p.join("")),
  fc
    .tuple(
      fc.constantFrom("principal://", "principalSet://"),
      text(3),
      fc.constantFrom(".", "/", ""),
      text(3),
      fc.constantFrom("/", "//", ""),
      text(6),
    )
    .map((p) => p.join("")),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
);

/** Why the client wrongly lets `m` through, or undefined when it does not. */
function leak(m: string): string | undefined {
  if (memberProblem(m) !== undefined) return undefined;
  const server = principalProblem(m);
  return server === undefined ? undefined : `client accepts ${JSON.stringify(m)}, the server refuses it: ${server}`;
}

/** Members whose rule is the same on both sides: emails, domains, public members (see the top). */
function sameRuleOnBothSides(m: string): boolean {
  if (m === "allUsers" || m === "allAuthenticatedUsers" || m.startsWith("domain:")) return true;
  const email = /^(?:deleted:)?(?:user|group|serviceAccount):(.*)$/s.exec(m);
  // serviceAccount:{x} with a "[" and no "@" is the Kubernetes form (one way only).
  return email !== null && !(m.startsWith("serviceAccount:") && email[1]!.includes("[") && !email[1]!.includes("@"));
}

/** Why the emulator accepts `m` while the client refuses it, where both should agree, or undefined. */
function laxServer(m: string): string | undefined {
  if (!sameRuleOnBothSides(m) || principalProblem(m) !== undefined) return undefined;
  const client = memberProblem(m);
  return client === undefined ? undefined : `the server accepts ${JSON.stringify(m)}, the client refuses it: ${client}`;
}

describe("client member rule vs the emulator's (the client never accepts what the server refuses)", () => {
  it("on the hostile tester's members and other awkward ones", () => {
    const members = [
      "user:a@b..com",
      "user:a@b.com.",
      "user:x\u001b[2J@example.com",
      "group:s\u0000re@example.com",
      "user:a\u0007@example.com",
      "user:a\u0085@example.com",
      "user:a@b.com/x",
      "user:a@[b].com",
      "serviceAccount:my-proj.svc.id.goog[default/my-ksa]",
      "serviceAccount:example.com:my-proj.svc.id.goog[default/my-ksa]",
      "serviceAccount:my-proj.svc.id.goog[default/a..b]",
      "serviceAccount:my-proj.svc.id.goog[de.fault/ksa]",
      "domain:a..b.com",
      "deleted:user:a@b..com?uid=1",
      "principal://iam.googleapis.com/x",
      "principal://a..b/x",
      "principalSet://iam.googleapis.com/locations/global/workforcePools/p/",
      ...POOLS.flatMap((p) => [
        `principal://${p}/subject/`,
        `principalSet://${p}/group/`,
        `principalSet://${p}/attribute./x`,
        `principalSet://${p}/.x/y`,
      ]),
    ];
    expect(members.map(leak).filter(Boolean)).toEqual([]);
  });

  it("on 200,000 random and near-valid members", () => {
    fc.assert(
      fc.property(member, (m) => {
        const l = leak(m);
        if (l) throw new Error(l);
      }),
      { numRuns: 200_000 },
    );
  });

  it("emails, domains and public members: the server accepts nothing the client refuses (200,000 members)", () => {
    const members = [
      "user:a@b..com",
      "user:a\u200bb@example.com",
      "user:a@-example.com",
      "user:a@exa_mple.com",
      "user:a@example.123",
      "user:a..b@example.com",
      "user:a(b)@example.com",
      "user:a,b@c.com",
      "serviceAccount:a@b.com?x",
      "user:a@b.com#",
      `user:${"a".repeat(65)}@example.com`,
      "deleted:group:.a@b.com?uid=1",
      "domain:a_b.com",
    ];
    expect(members.map(laxServer).filter(Boolean)).toEqual([]);
    fc.assert(
      fc.property(member, (m) => {
        const l = laxServer(m);
        if (l) throw new Error(l);
      }),
      { numRuns: 200_000 },
    );
  });

  it("and the generator reaches accepted members of each form (the property is not vacuous)", () => {
    const accepted = new Set<string>();
    fc.assert(
      fc.property(member, (m) => {
        if (memberProblem(m) === undefined)
          accepted.add(
            m.startsWith("deleted:")
              ? m.slice(0, 10)
              : m.startsWith("serviceAccount:") && m.endsWith("]")
                ? "kubernetes"
                : m.split(":")[0]!,
          );
      }),
      { numRuns: 200_000, seed: 1 },
    );
    expect([...accepted].sort()).toEqual(
      expect.arrayContaining([
        "deleted:pr",
        "deleted:us",
        "domain",
        "group",
        "kubernetes",
        "principal",
        "principalSet",
        "serviceAccount",
        "user",
      ]),
    );
  });
});
