// toPlain/toAnsi trim each line's end with trimEnd (was .replace(/\s+$/, "")): the same characters.
import { describe, expect, it } from "vitest";
import { seg, toAnsi, toPlain } from "../../src/diagnostics/lines.js";

describe("line ends", () => {
  it(
    "drop exactly what /\\s+$/ dropped: spaces, tabs, no-break and " + "other Unicode spaces; inner white space stays",
    () => {
      const ends = [
        " ",
        "  ",
        "\t",
        "\u00a0",
        "\u1680",
        "\u2000",
        "\u200a",
        "\u202f",
        "\u205f",
        "\u3000",
        " \t\u00a0 ",
      ];
      for (const end of ends) {
        const line = [seg("  + "), seg("role", "add"), seg(`  = "x y"${end}`)];
        const expected = `  + role  = "x y"${end}`.replace(/\s+$/, "");
        expect(toPlain([line])).toBe(`${expected}\n`);
        expect(toPlain([[seg(end)], line])).toBe(`\n${expected}\n`);
      }
      // A BOM prints as nothing: it is shown (terminalText), not trimmed as white space.
      expect(toPlain([[seg('= "x y"\ufeff')]])).toBe('= "x y"\\ufeff\n');
      expect(toAnsi([[seg("a  "), seg("b ", "add")]])).toBe("a  \u001b[32mb \u001b[39m\n");
      expect(toAnsi([[seg("a  "), seg("b  ")]])).toBe("a  b\n");
    },
  );
});
