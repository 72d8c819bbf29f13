// rememberAccepted: a check asked again about a string it accepted answers from memory; a
// refusal is checked (and its message made) each time.
import { describe, expect, it } from "vitest";
import { rememberAccepted } from "../../src/base/accepted.js";
import { memberProblem } from "../../src/iam/members.js";
import { roleProblem } from "../../src/iam/roles.js";

describe("rememberAccepted", () => {
  it("checks an accepted string once, a refused one each time", () => {
    const asked: string[] = [];
    const check = rememberAccepted((v) => (asked.push(v), v.startsWith("ok") ? undefined : `bad ${v}`));
    expect([check("ok1"), check("ok1"), check("no"), check("no")]).toEqual([undefined, undefined, "bad no", "bad no"]);
    expect(asked).toEqual(["ok1", "no", "no"]);
  });

  it("members and roles answer as before, asked once or twice", () => {
    for (let round = 0; round < 2; round++) {
      expect(memberProblem("user:bob@example.com")).toBeUndefined();
      expect(memberProblem("user:bob")).toMatch(/not an email address/);
      expect(memberProblem(42 as unknown as string)).toBe("a member must be a non-empty string");
      expect(roleProblem("roles/viewer")).toBeUndefined();
      expect(roleProblem("viewer")).toMatch(/is not of the form/);
    }
  });
});
