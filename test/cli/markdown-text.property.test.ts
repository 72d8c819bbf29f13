// Issue 47: any string escaped by markdown-text.ts stays where it stands when GFM (marked) reads
// it: a table row keeps its cells, a list item stays one item, a code block holds the text whole.
import fc from "fast-check";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import { mdCode, mdCodeBlock, mdText } from "../../src/cli/render/markdown-text.js";
import { terminalText } from "../../src/diagnostics/terminal-text.js";

/** Strings rich in what Markdown reads: pipes, backticks, backslashes, HTML, newlines, markers. */
const hostile = fc
  .array(
    fc.constantFrom(
      "|",
      "`",
      "``",
      "```",
      "\\",
      "<",
      ">",
      "</td>",
      "<details>",
      "&lt;",
      "\n",
      " ",
      "#",
      "-",
      "*",
      "_",
      "[",
      "]",
      "(",
      ")",
      "!",
      "~",
      "a",
      "é",
      "1.",
    ),
    { maxLength: 16 },
  )
  .map((a) => a.join(""));

const rendered = (md: string) => marked.parse(md) as string;
/** What a reader sees: tags dropped, entities decoded. */
const visible = (html: string) =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");

describe("Markdown escaping", () => {
  it("a table row of escaped values has one row with its cells, each showing the value as text", () => {
    fc.assert(
      fc.property(hostile, hostile, (a, b) => {
        const md = `| A | B | C |\n|---|---|---|\n| ${mdText(a)} | ${mdCode(b, true)} | end |\n`;
        const tokens = marked.lexer(md).filter((t) => t.type !== "space");
        expect(tokens.map((t) => t.type)).toEqual(["table"]);
        const table = tokens[0] as Tokens.Table;
        expect(table.rows).toHaveLength(1);
        expect(table.rows[0]!.map((c) => visible(marked.parseInline(c.text) as string).trim())).toEqual([
          terminalText(a).trim(),
          terminalText(b).trim(),
          "end",
        ]);
      }),
      { numRuns: 300 },
    );
  });

  it("a list item of escaped text is one item, without HTML, heading or code", () => {
    fc.assert(
      fc.property(hostile, hostile, (a, b) => {
        const md = `- ${mdCode(a)}: ${mdText(b)}\n`;
        const tokens = marked.lexer(md).filter((t) => t.type !== "space");
        expect(tokens.map((t) => t.type)).toEqual(["list"]);
        expect((tokens[0] as Tokens.List).items).toHaveLength(1);
        const html = rendered(md);
        expect(html).not.toMatch(/<(?!\/?(ul|li|code)>)/);
        expect(visible(html)).toContain(terminalText(b).trim());
      }),
      { numRuns: 300 },
    );
  });

  it("a fenced code block holds any text whole, lines and all", () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const md = [
          "<details><summary>Full plan</summary>",
          "",
          ...mdCodeBlock(`x\n${text}`),
          "",
          "</details>",
          "",
        ].join("\n");
        const tokens = marked.lexer(md).filter((t) => t.type !== "space");
        expect(tokens.map((t) => t.type)).toEqual(["html", "code", "html"]);
        // (Trailing blank lines aside, which a code block does not keep apart from its fence.)
        expect((tokens[1] as Tokens.Code).text.replace(/\n+$/, "")).toBe(`x\n${text}`.replace(/\n+$/, ""));
      }),
      { numRuns: 300 },
    );
  });
});
