// In an 80-column terminal, the plan and the approval prompt wrap their long lines at word
// boundaries, continuation lines indented under their text, as Terraform's prose does: before, the
// plan's lines were cut by the terminal in the middle of words ("the o / n-call engineer") and the
// prompt's by ink with no indentation. A quoted value (an ID, a condition title a reader copies) is
// never broken inside; a single word longer than the line is left whole for the terminal to fold.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, PROMPT, rp, runInPty, stackHead } from "./apply-helpers.js";

const HAS_SCRIPT = existsSync("/usr/bin/script");
const NAME = "nightly-backups-of-the-customer-database";
const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [{ name: rp(NAME), policy: { bindings: [] } }],
  },
  "converge-terminal-wrap-",
);
const CONDITION = `      condition:
        title: business hours only for the robot
        expression: request.time < timestamp("2027-01-01T00:00:00Z")
`;
const MEMBERS = [
  "user:someone-with-a-long-name@example.com",
  "serviceAccount:deployer-robot@my-project.iam.gserviceaccount.com",
];

/** Where a line may be broken: a space outside double quotes, after its indentation and change
 *  marker, not beside "=". */
function breakable(line: string): boolean {
  let quoted = false;
  const indent = line.length - line.trimStart().length;
  // A change marker ("+ ", "-/+ ") stays with the word after it.
  const start = indent + (/^(?:[-+~#>]|[-+]\/[-+]|<=) +/.exec(line.slice(indent))?.[0].length ?? 0);
  for (let i = start; i < line.length; i++) {
    const c = line[i];
    if (c === "\\" && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === " " && !quoted && i > start && line[i - 1] !== "=" && !/^ *=/.test(line.slice(i))) return true;
  }
  return false;
}

describe.skipIf(!HAS_SCRIPT)("long lines in an 80-column terminal", { timeout: 60_000 }, () => {
  it("wrap at word boundaries with a hanging indent, in the plan and at the prompt alike", async () => {
    const file = join(ws.dir, "stack.yaml");
    await writeFile(
      file,
      stackHead("wrap") + bindingYaml("viewers", NAME, "roles/gkebackup.viewer", MEMBERS, CONDITION),
    );
    const pty = runInPty(["apply", "-f", file], { cwd: ws.dir, emulator: ws.emu, cols: 80 });
    try {
      await pty.waitFor("Enter a value:");
      const lines = pty.text().split(/\r?\n/);
      const over = lines.filter((l) => l.length > 80 && breakable(l.slice(0, 80)));
      expect(over, pty.text()).toEqual([]);
      // As the screen shows them: the object's name, one word longer than the line, is folded by
      // the terminal under the plan and by ink at the prompt, at the same column.
      const access = [
        "  + serviceAccount:deployer-robot@my-project.iam.gserviceaccount.com gains",
        '      roles/gkebackup.viewer if "business hours only for the robot" on',
        `      projects/my-project/locations/us-central1/restorePlans/${NAME.slice(0, 19)}`,
        NAME.slice(19),
        "      (viewers)",
      ];
      const text = await pty.screen();
      const prompt = text.indexOf(PROMPT);
      // Under the plan and again above "Enter a value:", the same lines.
      expect(text.slice(0, prompt)).toContain(access.join("\n"));
      expect(text.slice(prompt)).toContain(access.join("\n"));
      // The diff's quoted values are whole.
      expect(pty.text()).toContain(`"projects/my-project/locations/us-central1/restorePlans/${NAME}"`);
    } finally {
      pty.kill();
    }
  });
});
