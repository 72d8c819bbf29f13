// The dependency graph: deterministic topological order, cycles as closed paths, DOT output.
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";

function graph(nodes: string[], edges: [string, string][]): Graph {
  const g = new Graph();
  for (const n of nodes) g.addNode(n);
  for (const [from, to] of edges) g.addEdge(from, to);
  return g;
}

describe("topoOrder", () => {
  it("puts dependencies before dependents", () => {
    const g = graph(
      ["app", "db", "net"],
      [
        ["app", "db"],
        ["db", "net"],
        ["app", "net"],
      ],
    );
    expect(g.topoOrder()).toEqual(["net", "db", "app"]);
  });

  it("keeps insertion order between independent nodes, every time", () => {
    const g = graph(["c", "a", "b"], []);
    expect(g.topoOrder()).toEqual(["c", "a", "b"]);
    const h = graph(["z", "y", "x", "w"], [["z", "w"]]);
    expect(h.topoOrder()).toEqual(["y", "x", "w", "z"]);
    expect(h.topoOrder()).toEqual(h.topoOrder());
  });

  it("orders a diamond deterministically", () => {
    const g = graph(
      ["top", "left", "right", "bottom"],
      [
        ["top", "left"],
        ["top", "right"],
        ["left", "bottom"],
        ["right", "bottom"],
      ],
    );
    expect(g.topoOrder()).toEqual(["bottom", "left", "right", "top"]);
  });

  it("throws on a cycle, naming it", () => {
    const g = graph(
      ["a", "b"],
      [
        ["a", "b"],
        ["b", "a"],
      ],
    );
    expect(() => g.topoOrder()).toThrow("a -> b -> a");
  });

  it("handles a graph of a thousand nodes", () => {
    const g = new Graph();
    for (let i = 0; i < 1000; i++) g.addNode(`n${i}`);
    for (let i = 1; i < 1000; i++) g.addEdge(`n${i}`, `n${i - 1}`);
    const order = g.topoOrder();
    expect(order).toHaveLength(1000);
    expect(order[0]).toBe("n0");
    expect(order[999]).toBe("n999");
  });
});

describe("findCycle", () => {
  it("returns undefined for an acyclic graph", () => {
    expect(
      graph(
        ["a", "b", "c"],
        [
          ["a", "b"],
          ["b", "c"],
          ["a", "c"],
        ],
      ).findCycle(),
    ).toBeUndefined();
  });

  it("returns the cycle as a closed path", () => {
    expect(
      graph(
        ["a", "b"],
        [
          ["a", "b"],
          ["b", "a"],
        ],
      ).findCycle(),
    ).toEqual(["a", "b", "a"]);
  });

  it("returns only the cycle, not the path leading to it", () => {
    const g = graph(
      ["entry", "x", "y", "z"],
      [
        ["entry", "x"],
        ["x", "y"],
        ["y", "z"],
        ["z", "x"],
      ],
    );
    expect(g.findCycle()).toEqual(["x", "y", "z", "x"]);
  });

  it("finds a self-loop", () => {
    expect(graph(["a"], [["a", "a"]]).findCycle()).toEqual(["a", "a"]);
  });
});

describe("dependencies, dependents and ancestors", () => {
  const g = graph(
    ["a", "b", "c", "d"],
    [
      ["a", "b"],
      ["b", "c"],
      ["d", "c"],
    ],
  );

  it("lists direct edges both ways", () => {
    expect(g.dependencies("a")).toEqual(["b"]);
    expect(g.dependents("c").sort()).toEqual(["b", "d"]);
    expect(g.dependencies("nope")).toEqual([]);
  });

  it("collects transitive dependencies", () => {
    expect([...g.ancestors("a")].sort()).toEqual(["b", "c"]);
    expect([...g.ancestors("c")]).toEqual([]);
  });

  it("adds nodes implicitly with edges, once", () => {
    const h = new Graph();
    h.addEdge("x", "y");
    h.addEdge("x", "y");
    h.addNode("x");
    expect(h.ids()).toEqual(["x", "y"]);
    expect(h.dependencies("x")).toEqual(["y"]);
    expect(h.has("y")).toBe(true);
  });
});

describe("toDot", () => {
  it("prints a digraph with every node and edge (dependent -> dependency)", () => {
    const g = graph(["invoker", "viewers"], [["invoker", "viewers"]]);
    expect(g.toDot()).toBe(
      [
        "digraph converge {",
        '  rankdir = "BT";',
        "  node [shape = box];",
        '  "invoker" [label = "invoker"];',
        '  "viewers" [label = "viewers"];',
        '  "invoker" -> "viewers";',
        "}",
        "",
      ].join("\n"),
    );
  });

  it("uses custom labels and shapes and escapes quotes and newlines", () => {
    const g = graph(['we"ird', "lake"], [['we"ird', "lake"]]);
    const dot = g.toDot((id) =>
      id === "lake" ? { label: "lake\ncloudnative:metastore/v1alpha:getFederation", shape: "note" } : { label: id },
    );
    expect(dot).toContain('"we\\"ird" [label = "we\\"ird"];');
    expect(dot).toContain('"lake" [label = "lake\\ncloudnative:metastore/v1alpha:getFederation", shape = note];');
    expect(dot).toContain('"we\\"ird" -> "lake";');
  });

  it("prints every id and label as `shown` gives it, before quoting (a secret with a quote is still found)", () => {
    const g = graph(['x-we"ird', "y"], [['x-we"ird', "y"]]);
    const dot = g.toDot(
      (id) => ({ label: `${id}\ntype` }),
      (s) => s.split('we"ird').join("(sensitive value)"),
    );
    expect(dot).not.toContain("ird");
    expect(dot).toContain('"x-(sensitive value)" [label = "x-(sensitive value)\\ntype"];');
    expect(dot).toContain('"x-(sensitive value)" -> "y";');
  });

  it("prints an empty graph", () => {
    expect(new Graph().toDot()).toBe('digraph converge {\n  rankdir = "BT";\n  node [shape = box];\n}\n');
  });
});
