import { describe, expect, it } from "vitest";
import { plainLine, seg } from "../../src/diagnostics/lines.js";
import { wrapLine } from "../../src/cli/render/wrap.js";

const plain = (lines: ReturnType<typeof wrapLine>) => lines.map(plainLine);

describe("wrapLine", () => {
  it("folds at the last space that fits, continuation indented under the text, styles kept", () => {
    const line = [
      seg("  "),
      seg("+ user:a@example.com", "add"),
      seg(" gains roles/viewer on projects/p/locations/l/restorePlans/n (viewers)"),
    ];
    const out = wrapLine(line, 40);
    expect(plain(out)).toEqual([
      "  + user:a@example.com gains",
      "      roles/viewer on",
      "      projects/p/locations/l/restorePlans/n",
      "      (viewers)",
    ]);
    expect(out[0]![1]).toEqual({ text: "+ user:a@example.com", style: "add" });
  });

  it("never breaks inside a quoted value, and leaves a word longer than the line whole", () => {
    const id = '    + id      = "projects/p/locations/l/restorePlans/n roles/viewer title with spaces"';
    expect(plain(wrapLine([seg(id)], 30))).toEqual([id]);
    expect(plain(wrapLine([seg("x".repeat(50) + " tail")], 30))).toEqual(["x".repeat(50), "    tail"]);
  });

  it("leaves a line that fits, and every line in a terminal too narrow to fold in", () => {
    expect(plain(wrapLine([seg("short line")], 80))).toEqual(["short line"]);
    const long = [seg("a b c d e f g h i j k l m n o p q r s t u v w x y z")];
    expect(wrapLine(long, 10)).toEqual([long]);
  });
});
