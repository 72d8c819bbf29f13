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
const errors = (text: string) =>
  parseStack(FILE, text)
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => `${d.line}:${d.column} ${d.summary}`);
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
    expect(errors("name: nums\nvariables:\n  a: 1e400\noutputs:\n  a: ${a}\n  n: .nan\n")).toEqual([
      "3:6 number out of range",
      "6:6 not a finite number",
    ]);
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
    expect(errors(text)).toEqual([
      "5:14 not a finite number",
      "7:14 number out of range",
      "8:14 number out of range",
      "16:14 not a finite number",
      "18:7 not a finite number",
    ]);
  });

  it("large but finite numbers still load", () => {
    expect(errors("name: t\nvariables:\n  a: 1e308\n  b: -1.7976931348623157e308\n  c: 0x1F\n")).toEqual([]);
  });

  it("are errors in a var file, at the value", () => {
    const f = file("v.yaml", "l: [1e400]\nn: 1\n");
    const read = readInputs({ varFiles: [f] });
    expect(read.diagnostics.map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([
      `1:5 --var-file ${f}: number out of range`,
    ]);
  });

  it("are errors in --var and CONVERGE_VAR_ values, lists and maps included", () => {
    const read = readInputs({ vars: ["n=1e400", "l=[1, 1e400]"] });
    expect(read.diagnostics).toEqual([]);
    const r = parseStack(FILE, STACK, { inputs: read.given });
    expect(r.diagnostics.map((d) => d.summary)).toEqual([
      'input "n": "1e400" is a number out of range (from --var n=…)',
      'input "l": "[1, 1e400]" holds a number out of range (from --var l=…)',
    ]);
    const env = parseStack(FILE, STACK, { inputs: readInputs({ env: { CONVERGE_VAR_n: "-1e999" } }).given });
    expect(env.diagnostics.map((d) => d.summary)).toEqual([
      'input "n": "-1e999" is a number out of range (from CONVERGE_VAR_n)',
    ]);
  });
});

// Explicit tags: only the JSON-compatible core ones (!!str, !!int, !!float, !!bool, !!null, !!map,
// !!seq) are accepted, and only on a value they fit; any other tag (custom, !!binary, !!timestamp,
// !!set, !!omap…) is an error at the tag, never a string, a map of bytes or an empty map.
describe("YAML tags", () => {
  const RESOURCE = `name: t
provider:
  project: p
  location: l
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
`;

  it("an unknown or non-JSON tag is an error at the tag (the hostile tags.yaml, multi2.yaml, tags5.yaml)", () => {
    expect(errors(`${RESOURCE}      members: [!!binary aGVsbG8=, !!js/function 'function(){}', !custom x]\n`)).toEqual([
      "11:17 unsupported YAML tag !!binary",
      "11:36 unsupported YAML tag !!js/function",
      "11:66 unsupported YAML tag !custom",
    ]);
    expect(errors(RESOURCE.replace("name: nightly", "name: !!timestamp 2001-12-14") + "      members: []\n")).toEqual([
      "9:13 unsupported YAML tag !!timestamp",
    ]);
    const outputs =
      `${RESOURCE}      members: []\noutputs:\n  b: !!binary aGVsbG8=\n  s: !!set {a, b}\n  ` +
      `m: !!omap [ {a: 1} ]\n  p: !!pairs [ {a: 1}, {a: 2} ]\n`;
    expect(errors(outputs)).toEqual([
      "13:6 unsupported YAML tag !!binary",
      "14:6 unsupported YAML tag !!set",
      "15:6 unsupported YAML tag !!omap",
      "16:6 unsupported YAML tag !!pairs",
    ]);
  });

  it("tags on keys, on block collections, verbatim, non-specific and redefined handles count too", () => {
    expect(errors("name: t\nvariables:\n  !custom k: v\n")).toEqual(["3:3 unsupported YAML tag !custom"]);
    expect(errors("name: t\nvariables:\n  v: !!omap\n    - a: 1\n")).toEqual(["3:6 unsupported YAML tag !!omap"]);
    expect(errors("name: t\nvariables:\n  v: !<tag:yaml.org,2002:set> {a}\n")).toEqual([
      "3:6 unsupported YAML tag !<tag:yaml.org,2002:set>",
    ]);
    expect(errors("name: t\nvariables:\n  v: ! x\n")).toEqual(["3:6 unsupported YAML tag !"]);
    expect(errors("%TAG !! tag:example.com,2000:\n---\nname: t\nvariables:\n  v: !!str x\n")).toEqual([
      "5:6 unsupported YAML tag !!str",
    ]);
  });

  it('a core tag on a value it does not fit is an error at the tag (desc2.yaml: !!float 1 was the string "1")', () => {
    expect(errors("name: d\ndescription: !!float 1\n")).toEqual(["2:14 YAML tag !!float does not fit this value"]);
    expect(
      errors("name: t\nvariables:\n  a: [!!int 1.5, !!bool yes, !!null x, !!str [1], !!map [1], !!seq {a: 1}]\n"),
    ).toEqual([
      "3:7 YAML tag !!int does not fit this value",
      "3:18 YAML tag !!bool does not fit this value",
      "3:30 YAML tag !!null does not fit this value",
      "3:40 YAML tag !!str does not fit this value",
      "3:51 YAML tag !!map does not fit this value",
      "3:62 YAML tag !!seq does not fit this value",
    ]);
  });

  it("the JSON-compatible core tags load, with their values", () => {
    const r = parseStack(
      FILE,
      "name: !!str t\nvariables: !!map\n  s: !!str 1\n  i: !!int 0x1F\n  f: !!float 1.5\n  b: !!bool true\n " +
        " n: !!null ''\n  m: !!map {k: v}\n  l: !!seq [1]\n  v: !<tag:yaml.org,2002:str> x\n",
    );
    expect(r.diagnostics).toEqual([]);
    expect(Object.fromEntries([...r.stack!.variables].map(([k, v]) => [k, v.value]))).toEqual({
      s: "1",
      i: 31,
      f: 1.5,
      b: true,
      n: null,
      m: { k: "v" },
      l: [1],
      v: "x",
    });
  });

  it("the same rules in a var file", () => {
    const f = file("tags.yaml", "a: !custom x\n");
    expect(readInputs({ varFiles: [f] }).diagnostics.map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([
      `1:4 --var-file ${f}: unsupported YAML tag !custom`,
    ]);
    const g = file("tags2.yaml", "a: !!float 1\n");
    expect(readInputs({ varFiles: [g] }).diagnostics.map((d) => `${d.line}:${d.column} ${d.summary}`)).toEqual([
      `1:4 --var-file ${g}: YAML tag !!float does not fit this value`,
    ]);
  });
});
