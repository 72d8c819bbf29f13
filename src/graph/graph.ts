// A small DAG over string node ids: insertion-ordered, deterministic topological order, cycle
// reporting, DOT output. Pure.
import { pushAll } from "../base/arrays.js";

/** The dependencies of every node without any (one set for all of them: never added to; most
 *  nodes of most stacks have none). */
const NO_DEPENDENCIES: ReadonlySet<string> = new Set<string>();

export class Graph {
  private readonly nodes = new Map<string, ReadonlySet<string>>(); // node -> dependencies
  /** Whether any edge was added (a stack without references has none: then the order is the
   *  insertion order and there is no cycle, without a walk). */
  private edges = false;

  addNode(id: string): void {
    if (!this.nodes.has(id)) this.nodes.set(id, NO_DEPENDENCIES);
  }

  /** `from` depends on `to` (to must happen first). */
  addEdge(from: string, to: string): void {
    this.addNode(from);
    this.addNode(to);
    const deps = this.nodes.get(from);
    if (deps === NO_DEPENDENCIES) this.nodes.set(from, new Set([to]));
    else (deps as Set<string>).add(to);
    this.edges = true;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  ids(): string[] {
    return [...this.nodes.keys()];
  }

  dependencies(id: string): string[] {
    return [...(this.nodes.get(id) ?? [])];
  }

  dependents(id: string): string[] {
    return this.ids().filter((n) => this.nodes.get(n)!.has(id));
  }

  /** All transitive dependencies of `id`. */
  ancestors(id: string): Set<string> {
    const out = new Set<string>();
    const stack = [...this.dependencies(id)];
    while (stack.length) {
      const n = stack.pop()!;
      if (out.has(n)) continue;
      out.add(n);
      pushAll(stack, this.dependencies(n));
    }
    return out;
  }

  /** One cycle as a closed path [a, b, …, a], or undefined when the graph is acyclic. */
  findCycle(): string[] | undefined {
    if (!this.edges) return undefined;
    const state = new Map<string, 1 | 2>(); // 1 visiting, 2 done
    const path: string[] = [];
    const visit = (n: string): string[] | undefined => {
      state.set(n, 1);
      path.push(n);
      for (const d of this.nodes.get(n)!) {
        const s = state.get(d);
        if (s === 1) return [...path.slice(path.indexOf(d)), d];
        if (s === undefined) {
          const c = visit(d);
          if (c) return c;
        }
      }
      path.pop();
      state.set(n, 2);
      return undefined;
    };
    for (const n of this.nodes.keys()) {
      if (!state.has(n)) {
        const c = visit(n);
        if (c) return c;
      }
    }
    return undefined;
  }

  /** Dependencies before dependents; ties keep insertion order. Throws on a cycle (check first). */
  topoOrder(): string[] {
    // Kahn's algorithm in rounds: a round is every node whose dependencies all came in earlier
    // rounds, in insertion order. Linear in the edges (rescanning every node per round was
    // quadratic: seconds for a 10,000-node chain).
    if (!this.edges) return [...this.nodes.keys()];
    const index = new Map<string, number>();
    const waiting = new Map<string, number>(); // node -> dependencies not yet ordered
    const dependents = new Map<string, string[]>();
    for (const [n, deps] of this.nodes) {
      index.set(n, index.size);
      waiting.set(n, deps.size);
      for (const d of deps) {
        const list = dependents.get(d);
        if (list) list.push(n);
        else dependents.set(d, [n]);
      }
    }
    const order: string[] = [];
    let round = [...this.nodes.keys()].filter((n) => waiting.get(n) === 0);
    while (round.length) {
      const next: string[] = [];
      for (const n of round) {
        order.push(n);
        for (const m of dependents.get(n) ?? []) {
          const left = waiting.get(m)! - 1;
          waiting.set(m, left);
          if (left === 0) next.push(m);
        }
      }
      round = next.sort((a, b) => index.get(a)! - index.get(b)!);
    }
    if (order.length < this.nodes.size) throw new Error(`graph has a cycle: ${this.findCycle()?.join(" -> ")}`);
    return order;
  }

  /** DOT text; `shown` is what each id and label is printed as (before quoting). */
  toDot(
    label: (id: string) => { label: string; shape?: string } = (id) => ({ label: id }),
    shown: (text: string) => string = (text) => text,
  ): string {
    const q = (s: string) => JSON.stringify(shown(s));
    const lines = ["digraph converge {", '  rankdir = "BT";', "  node [shape = box];"];
    for (const n of this.nodes.keys()) {
      const l = label(n);
      lines.push(`  ${q(n)} [label = ${q(l.label)}${l.shape ? `, shape = ${l.shape}` : ""}];`);
    }
    for (const [n, deps] of this.nodes) for (const d of deps) lines.push(`  ${q(n)} -> ${q(d)};`);
    lines.push("}");
    return lines.join("\n") + "\n";
  }
}
