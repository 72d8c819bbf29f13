// The change graph contracted into a policy graph: apply writes each changed policy once.
//
// A change's write lands on one policy (a cross-object replacement: on the new object's, then on
// the old one's); these are its pieces. The pieces of one policy form one write group, and group
// G depends on group H when a piece of G depends on a piece of H (through data sources and no-op
// changes too; the second piece of a replacement depends on its first). A dependency between two
// changes of the same policy is kept by the one write itself (both take effect together), unless
// the dependent change has values known only during apply (it needs the other written first).
//
// When the policy graph has a cycle, only what must be split is split: within a strongly
// connected set of policies, each piece gets a round, the longest chain of writes of the set it
// waits for (a dependency inside one write adds nothing); a policy is written once per round it
// has pieces in. A policy's changes that depend on nothing in the cycle all share its first
// write; those that do wait for the cycle go in a later one. Outside cycles, one write per policy.
//
// A change whose object name is known only during apply gets a write of its own.
import { resourceDriver } from "../drivers/registry.js";
import { type Node, nodeKey } from "./graph.js";
import { pushAll } from "../base/arrays.js";

interface Piece {
  node: Node;
  /** "{kind} {name}" of the policy, or a key of its own when the name is not known yet. */
  key: string;
  deps: { piece: Piece; hard: boolean }[];
  group: string;
}

const nameOf = (v: unknown): string | undefined => {
  const n = v && typeof v === "object" ? (v as { name?: unknown }).name : undefined;
  return typeof n === "string" && n ? n : undefined;
};

/** The policies a change is planned to write, in order. */
function plannedKeys(n: Node): string[] {
  const c = n.change;
  const d = c.mode === "managed" ? resourceDriver(c.type) : undefined;
  if (!d || n.action === "no-op" || (n.action === "import" && c.change.action === "no-op")) return [];
  const before = nameOf(c.change.before);
  if (n.action === "delete") return before ? [`${d.kind} ${before}`] : [];
  if (!c.policy) return [`? ${nodeKey(c)}`];
  if (n.action === "replace" && before && before !== c.policy) return [`${d.kind} ${c.policy}`, `${d.kind} ${before}`];
  return [`${d.kind} ${c.policy}`];
}

/** Values resolved only during apply: the change cannot be prepared before what it depends on is written. */
const deferred = (n: Node) => !!n.change.config && n.action !== "delete";

export class PolicyGraph {
  private readonly pieces = new Map<Node, Piece[]>();
  /** Per node, the keys of the dependencies written in the same write as it. */
  private readonly absorbed = new Map<Node, Set<string>>();
  /** Pieces still to arrive, per group. */
  private readonly outstanding = new Map<string, Set<Piece>>();

  constructor(nodes: Map<string, Node>) {
    for (const n of nodes.values())
      this.pieces.set(
        n,
        plannedKeys(n).map((key) => ({ node: n, key, deps: [], group: key })),
      );
    this.link(nodes);
    splitCycles([...this.pieces.values()].flat());
    for (const [n, ps] of this.pieces) {
      for (const p of ps) {
        const o = this.outstanding.get(p.group);
        if (o) o.add(p);
        else this.outstanding.set(p.group, new Set([p]));
      }
      const same = ps[0]?.deps.filter((d) => !d.hard && d.piece.group === ps[0]!.group) ?? [];
      if (same.length) this.absorbed.set(n, new Set(same.map((d) => nodeKey(d.piece.node.change))));
    }
  }

  /** The dependencies of each change's first piece (its later pieces depend on the one before). */
  private link(nodes: Map<string, Node>): void {
    const reached = new Map<Node, Piece[]>();
    const reach = (n: Node): Piece[] => {
      const own = this.pieces.get(n)!;
      if (own.length) return own;
      let r = reached.get(n);
      if (!r) {
        reached.set(n, (r = []));
        for (const k of n.deps) pushAll(r, reach(nodes.get(k)!));
      }
      return r;
    };
    for (const [n, ps] of this.pieces) {
      if (!ps.length) continue;
      for (const k of n.deps) {
        const dn = nodes.get(k)!;
        const direct = this.pieces.get(dn)!;
        for (const t of reach(dn)) {
          const soft =
            direct.length === 1 && ps.length === 1 && t.key === ps[0]!.key && !t.key.startsWith("?") && !deferred(n);
          ps[0]!.deps.push({ piece: t, hard: !soft });
        }
      }
      for (let i = 1; i < ps.length; i++) ps[i]!.deps.push({ piece: ps[i - 1]!, hard: true });
    }
  }

  /** The group the node's index-th work joins (an unplanned one: a group of its own); it has arrived. */
  arrive(n: Node, index: number, key: string): string {
    const p = this.pieces.get(n)?.[index];
    if (!p) return `! ${nodeKey(n.change)} #${index}`;
    this.outstanding.get(p.group)?.delete(p);
    return p.key === key || p.key.startsWith("?") ? p.group : `! ${nodeKey(n.change)} #${index}`;
  }

  /** The node will bring no more work (done, failed, skipped, or prepared with less than planned)
   *  from its `from`-th piece on. */
  settle(n: Node, from = 0): void {
    for (const p of this.pieces.get(n)?.slice(from) ?? []) this.outstanding.get(p.group)?.delete(p);
  }

  /** Every piece of the group has arrived, or never will. */
  complete(group: string): boolean {
    return !this.outstanding.get(group)?.size;
  }

  /** The node may be prepared while this dependency is only queued: they share one write. */
  sharesWrite(n: Node, depKey: string): boolean {
    return this.absorbed.get(n)?.has(depKey) ?? false;
  }
}

/** Splits the write groups of policies on a cycle into rounds (see the top of the file). */
function splitCycles(pieces: Piece[]): void {
  const edges = new Map<string, Set<string>>();
  for (const p of pieces) {
    if (!edges.has(p.key)) edges.set(p.key, new Set());
    for (const d of p.deps) if (d.hard) edges.get(p.key)!.add(d.piece.key);
  }
  const scc = components(edges);
  const size = new Map<number, number>();
  for (const c of scc.values()) size.set(c, (size.get(c) ?? 0) + 1);
  const onCycle = new Map([...edges.keys()].map((k) => [k, edges.get(k)!.has(k) || size.get(scc.get(k)!)! > 1]));
  if (![...onCycle.values()].some(Boolean)) return;
  const round = new Map<Piece, number>();
  for (const p of topological(pieces)) {
    let r = 0;
    for (const d of p.deps)
      if (scc.get(d.piece.key) === scc.get(p.key)) r = Math.max(r, (round.get(d.piece) ?? 0) + (d.hard ? 1 : 0));
    round.set(p, r);
    if (onCycle.get(p.key)) p.group = `${p.key} #${r}`;
  }
}

/** Pieces, dependencies first. */
function topological(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  const state = new Map<Piece, 1 | 2>();
  for (const start of pieces) {
    if (state.has(start)) continue;
    const stack: { p: Piece; i: number }[] = [{ p: start, i: 0 }];
    state.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const next = top.p.deps[top.i++]?.piece;
      if (next === undefined) {
        stack.pop();
        state.set(top.p, 2);
        out.push(top.p);
      } else if (!state.has(next)) {
        state.set(next, 1);
        stack.push({ p: next, i: 0 });
      }
    }
  }
  return out;
}

/** Strongly connected components (Tarjan's algorithm, iterative): key → component number. */
function components(edges: Map<string, Set<string>>): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const comp = new Map<string, number>();
  const stack: string[] = [];
  let counter = 0;
  let comps = 0;
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: { k: string; it: Iterator<string> }[] = [];
    const visit = (k: string) => {
      index.set(k, counter);
      low.set(k, counter++);
      stack.push(k);
      work.push({ k, it: edges.get(k)![Symbol.iterator]() });
    };
    visit(root);
    while (work.length) {
      const top = work[work.length - 1]!;
      const step = top.it.next();
      if (!step.done) {
        const w = step.value;
        if (!index.has(w)) visit(w);
        else if (!comp.has(w)) low.set(top.k, Math.min(low.get(top.k)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) low.set(work[work.length - 1]!.k, Math.min(low.get(work[work.length - 1]!.k)!, low.get(top.k)!));
      if (low.get(top.k) === index.get(top.k)) {
        for (let w = stack.pop(); ; w = stack.pop()) {
          comp.set(w!, comps);
          if (w === top.k) break;
        }
        comps++;
      }
    }
  }
  return comp;
}
