// The change graph apply walks: a node per change, with its dependencies. Deletes run in reverse
// order (a resource is deleted before what it depends on), and at an address whose type changed
// the new resource is created before the old one is removed.
import type { ResourceChange } from "../generated/schemas.js";
import type { StepAction } from "../contracts/events.js";
import { displayAction } from "../contracts/actions.js";

export interface Node {
  change: ResourceChange;
  action: StepAction;
  /** Keys of the nodes that must be done first. */
  deps: Set<string>;
  status: "pending" | "running" | "done" | "failed" | "skipped";
}

export function nodeKey(c: ResourceChange): string {
  return `${c.address}\u0000${c.change.action}\u0000${c.type}`;
}

function stepAction(c: ResourceChange): StepAction {
  const a = displayAction(c);
  return a === "import-update" ? "import" : a;
}

export function changeGraph(changes: readonly ResourceChange[]): Map<string, Node> {
  const nodes = new Map<string, Node>();
  for (const c of changes)
    nodes.set(nodeKey(c), { change: c, action: stepAction(c), deps: new Set(), status: "pending" });
  const byAddress = new Map<string, Node[]>();
  for (const n of nodes.values()) {
    const same = byAddress.get(n.change.address);
    if (same) same.push(n);
    else byAddress.set(n.change.address, [n]);
  }
  const isDelete = (n: Node) => n.action === "delete";
  for (const n of nodes.values()) {
    if (isDelete(n)) {
      // The deletes of what n depends on wait for n (found by address: scanning every node per
      // delete was quadratic).
      for (const d of n.change.dependencies ?? [])
        for (const dn of byAddress.get(d) ?? []) if (dn !== n && isDelete(dn)) dn.deps.add(nodeKey(n.change));
      for (const other of byAddress.get(n.change.address) ?? []) if (other !== n) n.deps.add(nodeKey(other.change));
    } else {
      for (const d of n.change.dependencies ?? [])
        for (const dn of byAddress.get(d) ?? []) if (!isDelete(dn)) n.deps.add(nodeKey(dn.change));
    }
  }
  return nodes;
}
