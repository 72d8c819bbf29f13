// Issue 18, item 4: fn::join, fn::split, fn::select, fn::toJSON and fn::secret, evaluated at plan
// time wherever a value is resolved, each with positioned errors (shape at load, values at plan).
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { evaluateCall } from "../../src/language/functions.js";
import { plan } from "../../src/plan/planner.js";
import { BINDING, EP, RP, STACK_HEAD, fakeCloud, planOptions, stackOf } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";
const HEAD = STACK_HEAD;

const STACK = `${HEAD}config:
  teams:
    type: string
    default: "sre,data"
variables:
  names:
    fn::split: [",", "\${teams}"]
  second:
    fn::select: [1, "\${names}"]
resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members:
        fn::split:
          - ","
          - fn::join: [",", ["user:a@example.com", "group:\${second}@example.com"]]
outputs:
  json:
    fn::toJSON: { teams: "\${names}", n: 1 }
  hidden:
    fn::secret: "\${second}"
`;

const world = () => ({ policies: { [RP]: { bindings: [] }, [EP]: { bindings: [] } } });

describe("functions", () => {
  it("evaluate at plan time in variables, properties and outputs", async () => {
    const r = await plan(stackOf(STACK), undefined, fakeCloud(world()).port, planOptions());
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(r.plan.variables).toMatchObject({ names: ["sre", "data"], second: "data" });
    const viewers = r.plan.resource_changes.find((c) => c.address === "viewers")!;
    expect((viewers.change.after as { members: string[] }).members).toEqual([
      "group:data@example.com",
      "user:a@example.com",
    ]);
    expect(r.plan.output_changes.json?.after).toBe('{"teams":["sre","data"],"n":1}');
  });

  it("compute each function's value", () => {
    expect(evaluateCall("fn::join", ["-", ["a", 1, true]])).toEqual({ ok: true, value: "a-1-true" });
    expect(evaluateCall("fn::split", [",", "a,,b"])).toEqual({ ok: true, value: ["a", "", "b"] });
    expect(evaluateCall("fn::select", [0, [{ k: 1 }]])).toEqual({ ok: true, value: { k: 1 } });
    expect(evaluateCall("fn::toJSON", ["x"])).toEqual({ ok: true, value: '["x"]' });
    expect(evaluateCall("fn::secret", "s")).toEqual({ ok: true, value: "s" });
  });

  it("report a wrong shape when the stack loads, at the function's key", () => {
    const text = `${HEAD}variables:
  a:
    fn::jion: [",", []]
  b:
    fn::join: [","]
resources:
  r:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members:
        fn::invoke: { function: x }
`;
    const d = parseStack(FILE, text).diagnostics;
    expect(d.map((x) => [x.summary, x.line, x.column])).toEqual([
      ['variables.a: unknown function "fn::jion" (did you mean "fn::join"?)', 7, 5],
      ["variables.b: fn::join takes a list of 2 arguments, got 1", 9, 5],
      [
        "resources.r.properties.members: fn::invoke reads a data source and " +
          "is only allowed as a variable's whole value",
        17,
        9,
      ],
    ]);
  });

  it("report a wrong value at plan time, at the argument", async () => {
    const text = `${HEAD}variables:
  list: [a, b]
  out:
    fn::select: [5, "\${list}"]
  join:
    fn::join: [",", [a, [b]]]
  split:
    fn::split: [1, "a"]
resources: {}
`;
    const r = await plan(stackOf(text), undefined, fakeCloud(world()).port, planOptions());
    expect(r.diagnostics.map((x) => [x.summary, x.path, x.line, x.column])).toEqual([
      [
        "variables.join: fn::join: element 1 is a list; only strings, numbers and booleans can be joined",
        'variables.join["fn::join"][1][1]',
        10,
        25,
      ],
      ["variables.split: fn::split: the delimiter must be a string", 'variables.split["fn::split"][0]', 12, 17],
      [
        "variables.out: fn::select: index 5 is out of range: the list has 2 element(s)",
        'variables.out["fn::select"][0]',
        8,
        18,
      ],
    ]);
  });
});
