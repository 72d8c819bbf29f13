// The problems of reading the inputs given from outside (a --var without "=", a --var-file that
// does not parse or does not exist) travel with the inputs to the loader, which reports them with
// the stack's own diagnostics in one list; the stack does not load while one of them is an error.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadAnyStackFile } from "../../src/sdk/load-any.js";
import { readInputs } from "../../src/config/var-files.js";

const dir = mkdtempSync(join(tmpdir(), "converge-input-problems-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

const STACK = `name: problems
provider:
  project: my-project
  location: us-central1
config:
  env:
    type: string
  size:
    type: number
resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: plan-\${env}
      role: roles/gkebackup.viewer
      members: [bogus]
`;

const lines = (diags: { line?: number; column?: number; summary: string; file?: string }[]) =>
  diags.map((d) => `${d.file ? `${d.line}:${d.column} ` : ""}${d.summary}`);

describe("the problems of reading the inputs", () => {
  it(
    "are reported with the stack's errors and the other inputs' " + "errors, the --var ones without a position",
    async () => {
      const stack = file("stack.yaml", STACK);
      const bad = file("bad.yaml", "env: [\n");
      const read = readInputs({ vars: ["nope", "size=big", "zzz=1"], varFiles: [bad, join(dir, "missing.yaml")] });
      const r = await loadAnyStackFile(stack, { inputs: read.given });
      expect(r.stack).toBeUndefined();
      const got = lines(r.diagnostics);
      expect(got).toEqual(
        expect.arrayContaining([
          '--var "nope" is not name=value',
          expect.stringMatching(/^2:1 --var-file .*bad\.yaml: /),
          `cannot read --var-file ${join(dir, "missing.yaml")}: it does not exist`,
          'unknown input "zzz" (from --var zzz=…)',
          'input "size": "big" is not a number (from --var size=…)',
          '6:3 input "env" has no value',
          expect.stringMatching(/^16:17 a: member "bogus" has no type prefix/),
        ]),
      );
      expect(r.diagnostics.find((d) => d.summary.startsWith("--var "))).toMatchObject({
        code: "input/syntax",
        severity: "error",
      });
      expect(r.diagnostics.find((d) => d.summary.startsWith("--var "))?.line).toBeUndefined();
    },
  );

  it("are reported with a stack file's YAML syntax error and with a missing stack file", async () => {
    const read = readInputs({ vars: ["nope"] });
    const broken = await loadAnyStackFile(file("broken.yaml", "name: [\n"), { inputs: read.given });
    expect(lines(broken.diagnostics)).toEqual([
      '--var "nope" is not name=value',
      expect.stringMatching(/^2:1 YAML syntax error/),
    ]);
    const missing = await loadAnyStackFile(join(dir, "none.yaml"), { inputs: read.given });
    expect(missing.diagnostics.map((d) => d.summary)).toEqual([
      '--var "nope" is not name=value',
      expect.stringMatching(/^stack file .*none\.yaml does not exist$/),
    ]);
  });

  it("keep a stack that is otherwise valid from loading", async () => {
    const stack = file("valid.yaml", STACK.replace("[bogus]", "[user:a@example.com]"));
    const ok = await loadAnyStackFile(stack, { inputs: readInputs({ vars: ["env=dev", "size=1"] }).given });
    expect(ok.diagnostics).toEqual([]);
    expect(ok.stack?.config.get("env")?.value).toBe("dev");
    const read = readInputs({ vars: ["env=dev", "size=1", "oops"] });
    const refused = await loadAnyStackFile(stack, { inputs: read.given });
    expect(refused.stack).toBeUndefined();
    expect(lines(refused.diagnostics)).toEqual(['--var "oops" is not name=value']);
  });

  it('a --var NAME without "=" is the one error about that input: it is not also said to have no value', async () => {
    const stack = file("named.yaml", STACK.replace("[bogus]", "[user:a@example.com]"));
    const r = await loadAnyStackFile(stack, { inputs: readInputs({ vars: ["env", "size=1"] }).given });
    expect(lines(r.diagnostics)).toEqual(['--var "env" is not name=value']);
  });
});
