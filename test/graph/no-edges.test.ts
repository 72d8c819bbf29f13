// A graph without edges answers topoOrder and findCycle without a walk (src/graph/graph.ts): the
// answers must be those of the walk, Kahn's rounds in insertion order, on graphs with and without
// edges (self-loops, duplicate edges, nodes added by addEdge only).
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import { seededRandom } from "../support/seeded-random.js";

/** Kahn's algorithm in rounds, ties in insertion order (topoOrder's definition). */
function kahn(g: Graph): string[] | undefined {
  const ids = g.ids();
  const waiting = new Map(ids.map((n) => [n, g.dependencies(n).length]));
  const order: string[] = [];
  let round = ids.filter((n) => waiting.get(n) === 0);
  while (round.length) {
    const next = new Set<string>();
    for (const n of round) {
      order.push(n);
      for (const m of g.dependents(n)) {
        waiting.set(m, waiting.get(m)! - 1);
        if (waiting.get(m) === 0) next.add(m);
      }
    }
    round = ids.filter((n) => next.has(n));
  }
  return order.length === ids.length ? order : undefined;
}

describe("Graph without edges", () => {
  it("orders and finds cycles as the walk does, on random graphs", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = seededRandom(seed);
      const g = new Graph();
      const n = Math.floor(r() * 30);
      const edges = seed % 3 === 0 ? 0 : Math.floor(r() * n * 1.2);
      for (let i = 0; i < n; i++) if (r() < 0.8) g.addNode(`n${Math.floor(r() * n)}`);
      for (let e = 0; e < edges; e++) g.addEdge(`n${Math.floor(r() * n)}`, `n${Math.floor(r() * n)}`);
      const expected = kahn(g);
      expect(g.findCycle() === undefined).toBe(expected !== undefined);
      if (expected) expect(g.topoOrder()).toEqual(expected);
      else expect(() => g.topoOrder()).toThrow(/graph has a cycle/);
      if (edges === 0) expect(g.topoOrder()).toEqual(g.ids());
    }
  });
});
