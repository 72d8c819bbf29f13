// Issue 47, item 2: principals that look like others, found from their own characters and by
// Unicode's confusables mapping against the other principals of a plan, spelled out by code point.
import { describe, expect, it } from "vitest";
import { codePoints, lookalikes, lookalikeText, skeleton, suspectReasons } from "../../src/iam/lookalike.js";

describe("lookalike principals", () => {
  it("a Cyrillic letter in a Latin email: beyond ASCII, mixed, spelled out, confusable with the real one", () => {
    const fake = "user:\u0430lice@example.com";
    expect(suspectReasons(fake)).toEqual(["characters beyond ASCII", "mixed scripts (Cyrillic, Latin)"]);
    expect(codePoints(fake)).toEqual(["U+0430 CYRILLIC SMALL LETTER A"]);
    expect(skeleton(fake)).toBe(skeleton("user:alice@example.com"));
    const found = lookalikes([fake], ["user:alice@example.com", "user:bob@example.com"]);
    expect(found).toEqual([
      {
        principal: fake,
        reasons: ["characters beyond ASCII", "mixed scripts (Cyrillic, Latin)"],
        code_points: ["U+0430 CYRILLIC SMALL LETTER A"],
        looks_like: ["user:alice@example.com"],
      },
    ]);
    expect(lookalikeText(found[0]!)).toBe(
      "looks like another principal (characters beyond ASCII; mixed scripts (Cyrillic, Latin); " +
        "confusable with user:alice@example.com): U+0430 CYRILLIC SMALL LETTER A",
    );
  });

  it("a mixed-script domain, a Greek omicron, invisible characters", () => {
    expect(suspectReasons("domain:ex\u0430mple.com")).toContain("mixed scripts (Cyrillic, Latin)");
    expect(suspectReasons("domain:xn--exmple-4nf.com")).toEqual([
      'punycode that reads "domain:ex\u0430mple.com"',
      "mixed scripts (Cyrillic, Latin)",
    ]);
    expect(codePoints("domain:xn--exmple-4nf.com")).toEqual(["U+0430 CYRILLIC SMALL LETTER A"]);
    expect(skeleton("domain:xn--exmple-4nf.com")).toBe(skeleton("domain:example.com"));
    expect(codePoints("group:y\u03bfu@example.com")).toEqual(["U+03BF GREEK SMALL LETTER OMICRON"]);
    expect(suspectReasons("user:bob\u200b@example.com")).toContain("invisible or bidi characters");
  });

  it("ASCII principals alike by confusables (1 and l) are flagged; one principal in two cases is not", () => {
    const found = lookalikes(
      ["user:bob1@example.com", "user:Carol@example.com"],
      ["user:bobl@example.com", "user:carol@example.com"],
    );
    expect(found).toEqual([
      { principal: "user:bob1@example.com", reasons: [], code_points: [], looks_like: ["user:bobl@example.com"] },
    ]);
  });

  it("an internationalised name all in one script is beyond ASCII but not mixed", () => {
    expect(suspectReasons("user:\u0438\u0432\u0430\u043d@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444")).toEqual([
      "characters beyond ASCII",
    ]);
    expect(lookalikes(["user:alice@example.com", "group:team@example.com"])).toEqual([]);
  });
});
