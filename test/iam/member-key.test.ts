// memberKey's shortcuts (the member itself when already lower-case; the exact prefixes tested only
// for "principal…") give the keys of its definition.
import { describe, expect, it } from "vitest";
import { memberKey } from "../../src/iam/members.js";

/** The definition, as written before the shortcuts. */
function reference(member: string): string {
  if (["allUsers", "allAuthenticatedUsers"].includes(member)) return member;
  if (["principal://", "principalSet://", "deleted:principal://"].some((p) => member.startsWith(p))) return member;
  const colon = member.indexOf(":");
  if (colon < 0) return member;
  const prefix = member.slice(0, colon);
  if (prefix === "deleted") {
    const q = member.indexOf("?");
    return q < 0
      ? member.toLowerCase()
      : member
          .slice(0, q)
          .toLowerCase()
          .replace(/^deleted:serviceaccount:/, "deleted:serviceAccount:") + member.slice(q);
  }
  return `${prefix}:${member.slice(colon + 1).toLowerCase()}`;
}

describe("memberKey", () => {
  it("equals its definition on every form, in every case", () => {
    const members = [
      "user:a@example.com",
      "user:A@Example.com",
      "User:a@example.com",
      "group:team0@example.com",
      "serviceAccount:SA@p.iam.gserviceaccount.com",
      "domain:Example.COM",
      "allUsers",
      "allAuthenticatedUsers",
      "allusers",
      "principal://iam.googleapis.com/X",
      "principalSet://iam.googleapis.com/Y",
      "principalX:Abc",
      "principal:Abc",
      "deleted:user:A@x.com?uid=123ABC",
      "deleted:serviceAccount:S@x.com?uid=1",
      "deleted:group:G@X.com",
      "deleted:principal://iam.googleapis.com/locations/global/workforcePools/P/subject/Alice",
      "deleted:principal://iam.googleapis.com/locations/global/workforcePools/p/subject/alice",
      "projectOwner:MyProject",
      "noColon",
      ":Empty",
      "user:",
      "user:İstanbul@example.com",
      "user:straße@EXAMPLE.com",
      "user:a:B@c.com",
    ];
    for (const m of members) expect(memberKey(m), m).toBe(reference(m));
  });
});
