// YAML merge keys (`<<: *anchor`, a YAML 1.1 feature YAML 1.2 dropped) are refused: one error at
// the `<<` key saying what to write instead, not the schema errors of a map whose keys were never
// merged (`<<` read as an ordinary key, the merged keys missing). The fast path declines any text
// with `<<` (it is not a key it reads), so both paths give this one error. A quoted "<<" is an
// ordinary key, as in YAML 1.1.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { parseSimpleYaml } from "../../src/yaml/fast-yaml.js";
import { readInputs } from "../../src/config/var-files.js";

const FILE = "/virtual/stack.yaml";
const diags = (text: string) =>
  parseStack(FILE, text).diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.summary}`);

const STACK = `name: m
provider:
  project: p1
  location: us-central1
resources:
  a:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: &common
      name: rp-1
      role: roles/gkebackup.viewer
      members: [user:a@example.com]
  b:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      <<: *common
      name: rp-2
`;

const SUMMARY = "YAML merge keys (<<) are not supported";

describe("YAML merge keys", () => {
  it("are one error at the << key, with what to write instead", () => {
    const r = parseStack(FILE, STACK);
    expect(r.stack).toBeUndefined();
    expect(diags(STACK)).toEqual([`15:7 error ${SUMMARY}`]);
    expect(r.diagnostics[0]!.detail).toMatch(/write the keys out/i);
  });

  it("one error for each << key, in flow mappings and with a list of aliases too", () => {
    const text =
      `name: m\nvariables:\n  base: &b {x: 1}\n  other: &o {y: 2}\n  ` + `v: {<<: *b, z: 3}\n  w:\n    <<: [*b, *o]\n`;
    expect(diags(text)).toEqual([`5:7 error ${SUMMARY}`, `7:5 error ${SUMMARY}`]);
  });

  it("the fast path declines a text with <<, so the library path decides", () => {
    expect(parseSimpleYaml(STACK)).toBeUndefined();
    expect(parseSimpleYaml("name: m\nvariables:\n  v:\n    <<: {x: 1}\n")).toBeUndefined();
    expect(diags("name: m\nvariables:\n  v:\n    <<: {x: 1}\n")).toEqual([`4:5 error ${SUMMARY}`]);
  });

  it('a quoted "<<" is an ordinary key', () => {
    const r = parseStack(FILE, `name: m\nvariables:\n  v:\n    "<<": {x: 1}\n`);
    expect(r.diagnostics).toEqual([]);
    expect(r.stack?.variables.get("v")?.value).toEqual({ "<<": { x: 1 } });
  });

  it("are refused in a var file too, at the key", () => {
    const dir = mkdtempSync(join(tmpdir(), "converge-merge-keys-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const f = join(dir, "vars.yaml");
    writeFileSync(f, "base: &b {x: 1}\nlabels:\n  <<: *b\n");
    expect(readInputs({ varFiles: [f] }).diagnostics.map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([
      `3:3 --var-file ${f}: ${SUMMARY}`,
    ]);
  });
});
