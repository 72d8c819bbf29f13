// Values YAML can write but a stack cannot hold: numbers that are not finite (1e400 overflows to
// Infinity, .inf, .nan), which JSON, the state and the cloud APIs cannot represent, so a plan
// would show them as a change for ever. Each is an error at the value, in stack files (inputs'
// defaults, variables, properties, outputs), var files and --var / CONVERGE_VAR_ values.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { readInputs } from "../../src/config/var-files.js";

const FILE = "/virtual/stack.yaml";
const errors = (text: string) => parseStack(FILE, text).diagnostics.filter((d) => d.severity === "error").map((d) => `${d.line}:${d.column} ${d.summary}`);
const dir = mkdtempSync(join(tmpdir(), "converge-yaml-values-"));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

const STACK = `name: t
provider:
  project: p
  location: l
config:
  n:
    type: number
  l:
    type: list
    default: []
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [group:sre@example.com]
`;

describe("numbers that are not finite", () => {
  it("are errors at the value in variables and outputs (the hostile n1 stack)", () => {
    expect(errors("name: nums\nvariables:\n  a: 1e400\noutputs:\n  a: ${a}\n  n: .nan\n")).toEqual(["3:6 number out of range", "6:6 not a finite number"]);
  });

  it("are errors in properties, inputs' defaults, nested lists and maps, whatever the spelling", () => {
    const text = `name: t
config:
  n:
    type: number
    default: -.Inf
variables:
  v: [1, {k: -1e309}]
  w: !!float 2e308
resources:
  r:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: x
      role: roles/x
      members: []
      extra: .NaN
outputs:
  o: [.inf]
`;
    expect(errors(text)).toEqual(["5:14 not a finite number", "7:14 number out of range", "8:14 number out of range", "16:14 not a finite number", "18:7 not a finite number"]);
  });

  it("large but finite numbers still load", () => {
    expect(errors("name: t\nvariables:\n  a: 1e308\n  b: -1.7976931348623157e308\n  c: 0x1F\n")).toEqual([]);
  });

  it("are errors in a var file, at the value", () => {
    const f = file("v.yaml", "l: [1e400]\nn: 1\n");
    const read = readInputs({ varFiles: [f] });
    expect(read.diagnostics.map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([`1:5 --var-file ${f}: number out of range`]);
  });

  it("are errors in --var and CONVERGE_VAR_ values, lists and maps included", () => {
    const read = readInputs({ vars: ["n=1e400", "l=[1, 1e400]"] });
    expect(read.diagnostics).toEqual([]);
    const r = parseStack(FILE, STACK, { inputs: read.given });
    expect(r.diagnostics.map((d) => d.summary)).toEqual(['input "n": "1e400" is a number out of range (from --var n=…)', 'input "l": "[1, 1e400]" holds a number out of range (from --var l=…)']);
    const env = parseStack(FILE, STACK, { inputs: readInputs({ env: { CONVERGE_VAR_n: "-1e999" } }).given });
    expect(env.diagnostics.map((d) => d.summary)).toEqual(['input "n": "-1e999" is a number out of range (from CONVERGE_VAR_n)']);
  });
});
