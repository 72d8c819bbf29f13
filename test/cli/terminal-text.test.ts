// Issue 12 (terminal): the two escapers every printed string goes through.
import { describe, expect, it } from "vitest";
import { jsonText, terminalText } from "../../src/diagnostics/terminal-text.js";

describe("terminalText", () => {
  it("shows C0 controls, ESC, DEL and C1 controls as \\xNN, CR and LF as \\r and \\n", () => {
    expect(terminalText("\x1b]0;pwned\x07\x1b[2J\r\nApply complete!\x9b")).toBe(
      "\\x1b]0;pwned\\x07\\x1b[2J\\r\\nApply complete!\\x9b",
    );
    expect(terminalText("\x00\x08\x0b\x0c\x1f\x7f\x80\x85\x9f")).toBe("\\x00\\x08\\x0b\\x0c\\x1f\\x7f\\x80\\x85\\x9f");
  });

  it("shows bidi overrides, embeddings, isolates and marks, and line/paragraph separators as \\uNNNN", () => {
    expect(
      terminalText(
        "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j\u200ek\u200fl\u061cm\u2028n\u2029",
      ),
    ).toBe(
      "a\\u202ab\\u202bc\\u202cd\\u202de\\u202ef\\u2066g\\u2067h" +
        "\\u2068i\\u2069j\\u200ek\\u200fl\\u061cm\\u2028n\\u2029",
    );
  });

  it(
    "shows the characters that print as nothing (zero-width, soft hyphen, word joiner, BOM): two " +
      "names that differ only by them must not look the same to a reviewer",
    () => {
      expect(terminalText("user:bob\u200b@example.com")).toBe("user:bob\\u200b@example.com");
      expect(terminalText("a\u00adb\u180ec\u200bd\u200ce\u200df\u2060g\u2061h\u2062i\u2063j\u2064k\ufeffl")).toBe(
        "a\\xadb\\u180ec\\u200bd\\u200ce\\u200df\\u2060g\\u2061h\\u2062i\\u2063j\\u2064k\\ufeffl",
      );
    },
  );

  it("leaves printable text alone: tabs, accents, other scripts, emoji, backslashes", () => {
    const fine = "user:zoë@example.com\troles/viewer ✔ 日本語 שלום 🎉 C:\\path \\x1b";
    expect(terminalText(fine)).toBe(fine);
  });

  it("is idempotent, so text escaped twice reads the same", () => {
    const once = terminalText("\x1b[2J\u202e\n");
    expect(terminalText(once)).toBe(once);
  });
});

describe("terminalText's quick test (no replace when nothing is unsafe)", () => {
  it("gives the replace's result for every character class, again and again (the test is stateless)", () => {
    const UNSAFE = new RegExp(
      String.raw`[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-` +
        String.raw`\u202e\u2060-\u2064\u2066-\u2069\ufeff]`,
      "g",
    );
    const slow = (t: string) =>
      t.replace(UNSAFE, (c) =>
        c === "\n"
          ? "\\n"
          : c === "\r"
            ? "\\r"
            : c.charCodeAt(0) < 0x100
              ? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
              : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
    const texts: string[] = [];
    for (const code of [...Array(0x2100).keys(), 0xfeff, 0xfefe, 0xff00])
      texts.push(`a${String.fromCharCode(code)}b`, String.fromCharCode(code), "plain", `x${String.fromCharCode(code)}`);
    for (const t of texts) expect(terminalText(t)).toBe(slow(t));
  });
});

describe("jsonText", () => {
  it("is JSON.stringify with C1, DEL, bidi and separators written as \\u escapes: the same data, nothing raw", () => {
    const value = { msg: "\x1b]0;pwned\x07\x1b[2J\r\nApply complete!\x9b\u202e\u2028\x7f", n: [1, "é"] };
    const text = jsonText(value, 2);
    expect(text).toBe(
      JSON.stringify(value, null, 2)
        .replace("\x9b", "\\u009b")
        .replace("\u202e", "\\u202e")
        .replace("\u2028", "\\u2028")
        .replace("\x7f", "\\u007f"),
    );
    expect(JSON.parse(text)).toEqual(value);
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2028\u2029]/);
    expect(jsonText({ a: "b" })).toBe('{"a":"b"}');
    expect(jsonText("bob\u200b@example.com\ufeff")).toBe('"bob\\u200b@example.com\\ufeff"');
  });
});
