// The emulator's own IAM rules, checked against the forms in Google's reference
// (google.iam.v1.Binding.members, "Principal identifiers", custom role IDs, policy limits), not
// against the client's rules.
import { describe, expect, it } from "vitest";
import { mergeBindings, policySize, sizeProblem } from "../../src/emulator/bindings.js";
import { principalIdentity, principalProblem } from "../../src/emulator/principals.js";
import { isBasicRole, roleNameProblem } from "../../src/emulator/roles.js";

const WORKFORCE = "iam.googleapis.com/locations/global/workforcePools/staff-pool";
const WORKLOAD = "iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/ci-pool";

describe("principal identifiers", () => {
  it("accepts every form Google's reference lists for allow policies", () => {
    for (const m of [
      "allUsers",
      "allAuthenticatedUsers",
      "user:alice@example.com",
      "user:Alice.Smith+tag@Example.COM",
      "serviceAccount:runner@my-project.iam.gserviceaccount.com",
      "serviceAccount:my-project.svc.id.goog[my-namespace/my-kubernetes-sa]",
      "group:admins@example.com",
      "domain:example.com",
      `principal://${WORKFORCE}/subject/alice@example.com`,
      `principalSet://${WORKFORCE}/group/admins`,
      `principalSet://${WORKFORCE}/attribute.department/sales`,
      `principalSet://${WORKFORCE}/*`,
      `principal://${WORKLOAD}/subject/repo:org/app:ref:refs/heads/main`,
      `principalSet://${WORKLOAD}/group/deployers`,
      `principalSet://${WORKLOAD}/attribute.repository/org/app`,
      `principalSet://${WORKLOAD}/*`,
      "principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/" +
        "my-project.svc.id.goog/subject/ns/prod/sa/runner",
      "deleted:user:alice@example.com?uid=123456789012345678901",
      "deleted:serviceAccount:runner@my-project.iam.gserviceaccount.com?uid=123456789012345678901",
      "deleted:group:admins@example.com?uid=123456789012345678901",
      `deleted:principal://${WORKFORCE}/subject/alice`,
    ]) {
      expect(principalProblem(m), m).toBeUndefined();
    }
  });

  it("refuses what is not one of them, naming the member", () => {
    for (const m of [
      "alice@example.com",
      "user:alice",
      "user:@example.com",
      "user:alice@localhost",
      "user:a@b@example.com",
      "user:alice@.example.com",
      "user:alice@example..com",
      "user: alice@example.com",
      "User:alice@example.com",
      "allusers",
      "group:admins",
      "domain:example",
      "domain:-example.com",
      "domain:exa_mple.com",
      "serviceAccount:my-project.svc.id.goog[missing-bracket",
      "principal://",
      "principalSet://",
      "principal://iam.googleapis.com",
      `principal://${WORKFORCE}/group/admins`,
      `principal://${WORKFORCE}`,
      "principal://iam.googleapis.com/projects/my-project/locations/global/workloadIdentityPools/p/subject/x",
      "principal://not a host/subject/x",
      "deleted:user:alice@example.com",
      "deleted:user:alice@example.com?uid=abc",
      "deleted:domain:example.com?uid=1",
      "projectOwner:my-project",
      "user:alice@example.com\u0000",
      "user:\uD800@example.com",
    ]) {
      const problem = principalProblem(m);
      expect(problem, JSON.stringify(m)).toBeDefined();
    }
    expect(principalProblem("user:alice")).toContain("user:alice");
    expect(principalProblem(42)).toBeDefined();
    expect(principalProblem("")).toBeDefined();
  });

  // RFC 5321/5322 addresses as Google takes them (with RFC 6531's letters and digits beyond
  // ASCII): a dot-atom of at most 64 characters before "@", a host name of dot-separated labels
  // after it. The emulator once took any "{x}@{y}.{z}" without ":", "/" or brackets.
  it("accepts ordinary and internationalised email addresses", () => {
    for (const e of [
      "a@b.c",
      "o'brien@example.com",
      "first_last-1@sub-domain.example.co.uk",
      "a+tag@x.io",
      "!#$%&'*+/=?^_`{|}~-@example.com",
      "zoë@exämple.com",
      "пользователь@пример.рф",
      `${"a".repeat(64)}@${"x".repeat(63)}.com`,
      `a@${["x".repeat(63), "x".repeat(63), "x".repeat(63), "x".repeat(61)].join(".")}`,
    ]) {
      for (const type of ["user", "group", "serviceAccount"])
        expect(principalProblem(`${type}:${e}`), `${type}:${e}`).toBeUndefined();
      // ("?" ends the email of a deleted principal, where ?uid= follows it.)
      if (!e.includes("?")) expect(principalProblem(`deleted:user:${e}?uid=1`), e).toBeUndefined();
    }
  });

  it.each([
    ["a@b..com", /empty label/],
    ["a@.b.com", /empty label/],
    ["a@-b.com", /hyphen/],
    ["a@b-.com", /hyphen/],
    ["a@b_c.com", /label/],
    ["a@b!.com", /label/],
    ["a@[10.0.0.1]", /label/],
    ["a@example.123", /all digits/],
    [`a@${"x".repeat(64)}.com`, /63/],
    [`a@${["x".repeat(63), "x".repeat(63), "x".repeat(63), "x".repeat(62)].join(".")}`, /253/],
    ["@example.com", /empty/],
    [".a@example.com", /dot/],
    ["a.@example.com", /dot/],
    ["a..b@example.com", /dot/],
    ["a(b)@example.com", /character/],
    ['"a"@example.com', /character/],
    ["a<b>@example.com", /character/],
    ["a,b@example.com", /character/],
    ["a;b@example.com", /character/],
    ["a\\b@example.com", /character/],
    ["a:b@example.com", /character/],
    ["a\u00b7b@example.com", /character/],
    [`${"a".repeat(65)}@example.com`, /64/],
    ["a@b.com?x", /label/],
    ["a@b.com#", /label/],
    ["a\u200bb@example.com", /format character/],
    ["a\u202eb@example.com", /format character/],
    ["a\u0007b@example.com", /control character/],
    ["a\u0085b@example.com", /control character/],
  ])("refuses the email %j for user:, group:, serviceAccount: and deleted:", (e, why) => {
    for (const m of [`user:${e}`, `group:${e}`, `serviceAccount:${e}`])
      expect(principalProblem(m), JSON.stringify(m)).toMatch(why);
    expect(principalProblem(`deleted:user:${e}?uid=1`), e).toBeDefined();
  });

  it("names one principal by emails in any case, federated identities only exactly", () => {
    expect(principalIdentity("user:Alice@Example.com")).toBe(principalIdentity("user:alice@example.com"));
    expect(principalIdentity("domain:Example.COM")).toBe(principalIdentity("domain:example.com"));
    expect(principalIdentity("deleted:serviceAccount:Run@P.iam.gserviceaccount.com?uid=1")).toBe(
      principalIdentity("deleted:serviceAccount:run@p.iam.gserviceaccount.com?uid=1"),
    );
    expect(principalIdentity("serviceAccount:a@example.com")).not.toBe(principalIdentity("user:a@example.com"));
    expect(principalIdentity(`principal://${WORKFORCE}/subject/Alice`)).not.toBe(
      principalIdentity(`principal://${WORKFORCE}/subject/alice`),
    );
    expect(principalIdentity(`principalSet://${WORKFORCE}/group/Admins`)).not.toBe(
      principalIdentity(`principalSet://${WORKFORCE}/group/admins`),
    );
    expect(principalIdentity(`deleted:principal://${WORKFORCE}/subject/Alice`)).not.toBe(
      principalIdentity(`deleted:principal://${WORKFORCE}/subject/alice`),
    );
  });
});

describe("role names", () => {
  it("accepts predefined and custom roles and refuses other forms", () => {
    for (const r of [
      "roles/viewer",
      "roles/gkebackup.viewer",
      "projects/my-project/roles/customRestorer",
      "organizations/1234567890/roles/my_role.v2",
    ]) {
      expect(roleNameProblem(r), r).toBeUndefined();
    }
    for (const r of [
      "owner",
      "roles/",
      "roles/a b",
      "projects/my-project/roles/ab",
      "projects/My-Project/roles/custom",
      "projects/p/roles/custom",
      "organizations/acme/roles/custom",
      `projects/my-project/roles/${"x".repeat(65)}`,
      "",
    ]) {
      expect(roleNameProblem(r), r).toBeDefined();
    }
    expect(roleNameProblem("owner")).toContain('"owner"');
    expect(isBasicRole("roles/editor")).toBe(true);
    expect(isBasicRole("roles/browser")).toBe(false);
  });
});

describe("stored bindings", () => {
  const until = { title: "until", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" };

  it(
    "merges bindings of one role and condition, each principal once " + "in its first spelling, and drops empty ones",
    () => {
      const merged = mergeBindings([
        { role: "roles/x.y", members: ["user:A@example.com"] },
        { role: "roles/x.y", members: ["user:b@example.com"], condition: until },
        { role: "roles/x.z", members: [] },
        { role: "roles/x.y", members: ["user:a@example.com", "user:c@example.com"] },
        {
          role: "roles/x.y",
          members: ["user:b@example.com", "user:B@example.com"],
          condition: { ...until, description: "", location: "f.yaml" },
        },
      ]);
      expect(merged).toEqual([
        { role: "roles/x.y", members: ["user:A@example.com", "user:c@example.com"] },
        { role: "roles/x.y", members: ["user:b@example.com"], condition: until },
      ]);
    },
  );

  it("keeps conditions that differ in title, description or expression apart", () => {
    const merged = mergeBindings([
      { role: "r", members: ["user:a@example.com"], condition: until },
      { role: "r", members: ["user:a@example.com"], condition: { ...until, title: "other" } },
      { role: "r", members: ["user:a@example.com"], condition: { ...until, description: "d" } },
      { role: "r", members: ["user:a@example.com"], condition: { ...until, expression: "true" } },
      { role: "r", members: ["user:a@example.com"] },
    ]);
    expect(merged).toHaveLength(5);
  });

  it("counts every occurrence against 1,500 principals and 250 Google groups", () => {
    const users = (n: number) => Array.from({ length: n }, (_, i) => `user:u${i}@example.com`);
    const groups = (n: number) => Array.from({ length: n }, (_, i) => `group:g${i}@example.com`);
    expect(
      sizeProblem(
        policySize([
          { role: "a", members: users(750) },
          { role: "b", members: users(750) },
        ]),
      ),
    ).toBeUndefined();
    expect(
      sizeProblem(
        policySize([
          { role: "a", members: users(750) },
          { role: "b", members: users(751) },
        ]),
      ),
    ).toContain("1501 principals");
    expect(sizeProblem(policySize([{ role: "a", members: groups(250) }]))).toBeUndefined();
    expect(
      sizeProblem(
        policySize([
          { role: "a", members: groups(125) },
          { role: "b", members: groups(126) },
        ]),
      ),
    ).toContain("251 Google groups");
  });
});
