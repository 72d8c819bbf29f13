import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isEmail, memberKey, memberProblem, normalizeMembers } from "../../src/iam/members.js";

// The pattern isEmail once replaced (it backtracked on long domains). isEmail is now stricter
// (Google's rule: no control characters, no empty or over-long labels, …): it never accepts what
// the pattern refuses, and accepts the ordinary addresses the pattern accepted.
const EMAIL_PATTERN = /^[^@\s:]+@[^@\s:]+\.[^@\s:]+$/;

describe("isEmail", () => {
  it("accepts ordinary addresses and refuses odd ones", () => {
    for (const s of ["a@b.c", "sa@p.iam.gserviceaccount.com", "zoë@exämple.com", "Alice@Example.COM"])
      expect(isEmail(s), JSON.stringify(s)).toBe(true);
    for (const s of [
      "@b.c",
      "a@.c",
      "a@b.",
      "a@b",
      "a@@b.c",
      "a@b@c.d",
      "a b@c.d",
      "a:b@c.d",
      "a@b..c",
      "a@.b.c",
      "",
      "a@b.c\n",
    ])
      expect(isEmail(s), JSON.stringify(s)).toBe(false);
  });

  it("accepts nothing the e-mail pattern refuses, on random strings over a small alphabet", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "b", "@", ".", ":", " ", "\t", "é"), maxLength: 12 }),
        (s) => !isEmail(s) || EMAIL_PATTERN.test(s),
      ),
      { numRuns: 20_000 },
    );
  });

  it(
    "answers at once for a 200,000-character domain, with or without a " +
      "dot (the pattern would backtrack for hours)",
    () => {
      expect(memberProblem(`user:a@${"x".repeat(200_000)}`)).toMatch(/is not an email address/);
      expect(memberProblem(`user:a@${"x".repeat(200_000)}.com`)).toMatch(
        /is not an email address: the domain is longer than 253 characters/,
      );
      expect(memberProblem(`user:a@${"x".repeat(63)}.com`)).toBeUndefined();
    },
  );
});

describe("normalizeMembers", () => {
  // The definition: the first spelling of each key, sorted by key.
  const byDefinition = (ms: string[]) => {
    const first = new Map<string, string>();
    for (const m of ms) if (!first.has(memberKey(m))) first.set(memberKey(m), m);
    return [...first.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, m]) => m);
  };

  it("equals its definition on lists sorted or not, with duplicates and case variants", () => {
    const member = fc.constantFrom(
      "user:a@x.com",
      "user:A@x.com",
      "user:b@x.com",
      "group:g@x.com",
      "allUsers",
      "domain:X.com",
      "serviceAccount:s@p.iam.gserviceaccount.com",
    );
    fc.assert(
      fc.property(fc.array(member, { maxLength: 6 }), (ms) => {
        expect(normalizeMembers(ms)).toEqual(byDefinition(ms));
      }),
      { numRuns: 2_000 },
    );
  });

  it("returns a new list, not the one given", () => {
    const ms = ["group:g@x.com", "user:a@x.com"];
    expect(normalizeMembers(ms)).not.toBe(ms);
  });
});

// Google's Binding.members reference lists deleted:principal://…/subject/{value} beside the deleted
// user, group and service account forms. A federated identifier compares exactly (SPEC), deleted or not.
describe("deleted federated principals", () => {
  const POOL = "principal://iam.googleapis.com/locations/global/workforcePools/pool";
  const UPPER = `deleted:${POOL}/subject/Alice`;
  const LOWER = `deleted:${POOL}/subject/alice`;

  it("are accepted members", () => {
    expect(memberProblem(UPPER)).toBeUndefined();
    expect(memberProblem(LOWER)).toBeUndefined();
  });

  it("are still rejected when the identifier is empty or holds white space", () => {
    expect(memberProblem("deleted:principal://")).toMatch(/not a valid deleted principal/);
    expect(memberProblem(`deleted:${POOL}/subject/a b`)).toMatch(/not a valid deleted principal/);
  });

  it("compare case-sensitively: two spellings are two members", () => {
    expect(memberKey(UPPER)).toBe(UPPER);
    expect(memberKey(LOWER)).toBe(LOWER);
    expect(normalizeMembers([UPPER, LOWER])).toHaveLength(2);
  });

  it("deleted:{type}:{email}?uid={n} keeps its rule: the email case-insensitive, the uid exact", () => {
    expect(memberKey("deleted:user:Alice@Example.com?uid=123")).toBe("deleted:user:alice@example.com?uid=123");
    expect(memberKey("deleted:serviceAccount:SA@p.iam.gserviceaccount.com?uid=9")).toBe(
      "deleted:serviceAccount:sa@p.iam.gserviceaccount.com?uid=9",
    );
    expect(memberKey("deleted:user:a@x.com?uid=1")).not.toBe(memberKey("deleted:user:a@x.com?uid=2"));
  });
});
