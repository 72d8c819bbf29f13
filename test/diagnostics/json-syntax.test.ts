// Why a file is not JSON, without the file's characters: JSON.parse quotes the text around the
// fault, and a BOM, zero-width space or bidi override in it reached the terminal raw.
import { describe, expect, it } from "vitest";
import { jsonSyntaxMessage } from "../../src/diagnostics/json-syntax.js";

function why(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return jsonSyntaxMessage(e, text);
  }
  throw new Error(`${JSON.stringify(text)} is JSON`);
}

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}]/u;

describe("jsonSyntaxMessage", () => {
  it.each([
    ["\ufeff{}", /U\+FEFF \(a byte order mark\).* at line 1, column 1$/],
    ["\u200b{}", /U\+200B \(a zero-width space\)/],
    ['{"a": 1\u202e}', /\(U\+202E\) at line 1, column 8$/],
    ['{\n  "a":\u001b}', /U\+001B \(an escape\)/],
    ['{"a":\u00a0}', /U\+00A0/],
    ["\u2028", /U\+2028/],
  ])("names the invisible character in %j, and prints none", (text, message) => {
    const m = why(text);
    expect(m).toMatch(message);
    expect(m.replace(/ /g, "")).not.toMatch(INVISIBLE);
  });

  it("quotes no text of the file and keeps JSON.parse's reason", () => {
    const secret = '{"token": "s3cr3t-value", "a": }';
    const m = why(secret);
    expect(m).not.toContain("s3cr3t");
    expect(m).toMatch(/^Unexpected token/);
    expect(why('{"a"')).toMatch(/Expected ':' after property name|Unexpected end/);
  });

  it("gives no place it cannot be sure of (a token found elsewhere than where parsing stopped)", () => {
    expect(why('{"}": }')).not.toMatch(/at line/);
  });
});
