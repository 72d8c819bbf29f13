// Issue 18, refactoring: `moved:` entries checked when the stack loads (chains followed to their
// final address; a cycle, a target not declared, a source still declared or moved twice are
// errors) and applied to the prior state before planning.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { applyMoves } from "../../src/plan/moves.js";
import type { State, StateResource } from "../../src/generated/schemas.js";
import { BINDING } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";
const stack = (moved: string, names = ["c", "d"]) =>
  `name: t\nprovider:\n  project: my-project\n  location: us-central1\nmoved:\n${moved}resources:\n` +
  names
    .map((n) => `  ${n}:\n    type: ${BINDING}\n    properties: { name: nightly, role: roles/x.${n}, members: [] }\n`)
    .join("");

describe("moved", () => {
  it("follows a chain to its final address", () => {
    const r = parseStack(FILE, stack("  - from: a\n    to: b\n  - from: b\n    to: c\n"));
    expect(r.stack?.moved).toEqual([
      { from: "a", to: "c", i: 0 },
      { from: "b", to: "c", i: 1 },
    ]);
  });

  it("reports a source still declared, a source moved twice, and a bad address", () => {
    const r = parseStack(
      FILE,
      stack("  - from: c\n    to: d\n  - from: x\n    to: c\n  - from: x\n    to: d\n  - from: 'y[oops]'\n    to: d\n"),
    );
    expect(r.diagnostics.map((d) => [d.summary, d.line])).toEqual([
      ['moved[3].from: "y[oops]" is not a resource address', 12],
      ["moved[0]: c is still declared in the stack", 6],
      ["moved[2]: x is moved twice (also by moved[1])", 10],
    ]);
  });

  it("renames state resources and their dependencies; a forEach name moves every instance", () => {
    const res = (address: string, dependencies: string[] = []): StateResource => ({
      address,
      type: BINDING,
      id: address,
      inputs: {},
      outputs: {},
      dependencies,
    });
    const prior = {
      version: 1,
      lineage: "l",
      serial: 1,
      stack: "t",
      resources: [res("a"), res('t["x"]', ["a"]), res("keep")],
      outputs: {},
    } as unknown as State;
    const m = applyMoves(prior, [
      { from: "a", to: "b" },
      { from: "t", to: "u" },
    ]);
    expect(m.prior!.resources.map((r) => [r.address, r.dependencies])).toEqual([
      ["b", []],
      ['u["x"]', ["b"]],
      ["keep", []],
    ]);
    expect([...m.previous]).toEqual([
      ["b", "a"],
      ['u["x"]', 't["x"]'],
    ]);
    expect(prior.resources[0]!.address).toBe("a");
  });

  it("renames every resource of a large stack by a move each, each move looked at a bounded number of times", () => {
    // Each move was looked for among all of them, per resource: 100,000 moves took 21 s.
    const n = 2_000;
    const res = (address: string, dependencies: string[] = []): StateResource => ({
      address,
      type: BINDING,
      id: address,
      inputs: {},
      outputs: {},
      dependencies,
    });
    const prior = {
      version: 1,
      lineage: "l",
      serial: 1,
      stack: "t",
      resources: Array.from({ length: n }, (_, i) => res(`old${i}`, i ? [`old${i - 1}`] : [])),
      outputs: {},
    } as unknown as State;
    // The moves are looked at a bounded number of times each, not once per resource.
    let reads = 0;
    const moves = new Proxy(
      Array.from({ length: n }, (_, i) => ({ from: `old${n - 1 - i}`, to: `new${n - 1 - i}` })),
      { get: (t, k, r) => (typeof k === "string" && /^\d+$/.test(k) && reads++, Reflect.get(t, k, r)) },
    );
    const m = applyMoves(prior, moves);
    expect(reads).toBeLessThanOrEqual(2 * n);
    expect(m.prior!.resources[n - 1]).toMatchObject({ address: `new${n - 1}`, dependencies: [`new${n - 2}`] });
    expect(m.previous.size).toBe(n);
  });

  it("checks the moves of a large stack looking over its resources once, not once per move", () => {
    const n = 2_000;
    const names = Array.from({ length: n }, (_, i) => `new${i}`);
    const text = stack(names.map((x, i) => `  - from: old${i}\n    to: ${x}\n`).join(""), names);
    // Each move's source (not declared: it was moved) was looked for among all the resources.
    let scans = 0;
    const values = Map.prototype.values;
    Map.prototype.values = function (this: Map<unknown, unknown>) {
      if (this.size === n && this.has("new0")) scans++;
      return values.call(this) as MapIterator<unknown>;
    };
    try {
      const r = parseStack(FILE, text);
      expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      expect(r.stack!.moved).toHaveLength(n);
    } finally {
      Map.prototype.values = values;
    }
    expect(scans).toBeLessThanOrEqual(10);
  });
});
