// A problem with the inputs given on the command line (a --var without "=", a --var-file that does
// not parse or does not exist) is reported in the same run as every other error: the other inputs'
// and the stack's own (schema, members, inputs without a value: plan only, validate needs no
// values). validate and plan report the same list otherwise, in text and in --json; exit 1, no cloud call, no state
// written.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";
import { BINDING_T } from "./apply-helpers.js";

const SEED: EmulatorWorld = { projects: { "my-project": { number: "123456789012" } }, restorePlans: [] };
const ws = useEmulatorWorkspace(SEED, "converge-input-errors-");

const STACK = `name: together
provider:
  project: my-project
  location: us-central1
config:
  team:
    type: string
  count:
    type: number
resources:
  a:
    type: ${BINDING_T}
    properties:
      name: rp-1
      role: roles/viewer
      members: [bogus-member]
      extra: 1
`;

/** The stack's own errors, reported whatever the inputs. */
const STACK_ERRORS = [
  'stack.yaml:17:7: Error: resources.a.properties: unknown property "extra"',
  'stack.yaml:16:17: Error: a: member "bogus-member" has no type prefix',
];

beforeAll(async () => {
  await writeFile(join(ws.dir, "stack.yaml"), STACK);
  await writeFile(join(ws.dir, "bad.yaml"), "team: [\n");
});

const CASES: { name: string; args: string[]; expected: string[] }[] = [
  {
    name: "a --var without =",
    args: ["--var", "nope"],
    expected: ['Error: --var "nope" is not name=value', 'stack.yaml:6:3: Error: input "team" has no value'],
  },
  {
    name: "an unknown --var name and a value that is not a number",
    args: ["--var", "zzz=1", "--var", "count=abc"],
    expected: [
      'Error: unknown input "zzz" (from --var zzz=…)',
      'Error: input "count": "abc" is not a number (from --var count=…)',
    ],
  },
  {
    name: "a var file with a YAML syntax error",
    args: ["--var-file", "bad.yaml"],
    expected: ["bad.yaml:2:1: Error: --var-file bad.yaml: ", 'stack.yaml:8:3: Error: input "count" has no value'],
  },
  {
    name: "a var file that does not exist",
    args: ["--var-file", "missing.yaml"],
    expected: [
      "Error: cannot read --var-file missing.yaml: it does not exist",
      'stack.yaml:6:3: Error: input "team" has no value',
      'stack.yaml:8:3: Error: input "count" has no value',
    ],
  },
  {
    name: "all of them at once",
    args: [
      "--var",
      "nope",
      "--var",
      "zzz=1",
      "--var",
      "count=abc",
      "--var-file",
      "bad.yaml",
      "--var-file",
      "missing.yaml",
    ],
    expected: [
      'Error: --var "nope" is not name=value',
      'Error: unknown input "zzz"',
      'Error: input "count": "abc" is not a number',
      "bad.yaml:2:1: Error: --var-file bad.yaml: ",
      "Error: cannot read --var-file missing.yaml",
      'stack.yaml:6:3: Error: input "team" has no value',
    ],
  },
];

describe("input errors are reported with the stack's errors", () => {
  for (const c of CASES) {
    it(`${c.name}: validate and plan report every error, in text and in --json`, async () => {
      const before = totalRequests(await stats(ws.emu));
      for (const command of ["validate", "plan"]) {
        // validate needs no input values (as terraform validate): a missing one is no error there.
        const expected = [...c.expected, ...STACK_ERRORS].filter(
          (e) => command === "plan" || !e.includes("has no value"),
        );
        const r = await runCli([command, "-f", "stack.yaml", ...c.args], { cwd: ws.dir, emulator: ws.emu });
        expectExit(r, 1);
        for (const e of expected) expect(r.stderr, `${command}: ${e}`).toContain(e);
        const j = await runCli([command, "-f", "stack.yaml", "--json", ...c.args], { cwd: ws.dir, emulator: ws.emu });
        expectExit(j, 1);
        const out = JSON.parse(j.stdout) as {
          diagnostics?: { summary: string }[];
          converge?: { diagnostics: { summary: string }[] };
        };
        const summaries = (out.diagnostics ?? out.converge?.diagnostics ?? []).map((d) => d.summary).join("\n");
        for (const e of expected) expect(summaries, `${command} --json: ${e}`).toContain(e.replace(/^.*Error: /, ""));
      }
      expect(totalRequests(await stats(ws.emu))).toBe(before);
      expect(existsSync(join(ws.dir, "state"))).toBe(false);
    });
  }
});

describe("a YAML merge key", () => {
  it("is one error at the << key, in validate and plan alike", async () => {
    const stack =
      STACK.replace("    properties:\n", "    properties: &p\n").replace("      extra: 1\n", "") +
      `  b:\n    type: ${BINDING_T}\n    properties:\n      <<: *p\n      name: rp-2\n`;
    await writeFile(join(ws.dir, "merge.yaml"), stack.replace("[bogus-member]", "[user:a@example.com]"));
    for (const command of ["validate", "plan"]) {
      const r = await runCli([command, "-f", "merge.yaml", "--var", "team=t", "--var", "count=1"], {
        cwd: ws.dir,
        emulator: ws.emu,
      });
      expectExit(r, 1);
      expect(r.stderr).toBe(
        "merge.yaml:20:7: Error: YAML merge keys (<<) are not supported\n" + r.stderr.slice(r.stderr.indexOf("\n") + 1),
      );
      expect(r.stderr.match(/Error:/g)).toHaveLength(1);
    }
  });
});
