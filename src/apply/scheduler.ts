// Walks the change graph with bounded parallelism: a node runs when what it depends on is done
// (or, for a dependency on the same policy, when it shares the node's write); the work on one
// policy waits for every change planned on it and goes out as one read-modify-write (the policy
// graph of policy-graph.ts says which changes share a write); a failure skips only what depends on
// it; after an abort no queued write starts (nor a retry, nor the write of a read-modify-write
// whose read is done), the calls in flight finish, and what did not finish is reported as not
// started.
import type { LimitFunction } from "p-limit";
import type { Policy } from "../generated/schemas.js";
import { type CloudPort, INTERRUPTED, type PolicyKind, statusOf } from "../contracts/cloud-port.js";
import type { Emit } from "../contracts/events.js";
import { kindLabel } from "../gcp/object-kinds.js";
import type { Node } from "./graph.js";
import { PolicyGraph } from "./policy-graph.js";
import type { Work } from "./work.js";

export interface SchedulerContext {
  nodes: Map<string, Node>;
  cloud: CloudPort;
  limit: LimitFunction;
  emit: Emit;
  signal?: AbortSignal;
  /** Policies already read ("{kind} {name}"): writes start from them, and learn the new ones. */
  live?: Map<string, Policy>;
  /** The policy as the plan saw it without reading it (the state's view; ./state-view.ts). */
  planned: (kind: PolicyKind, name: string) => Policy | undefined;
  prepare: (n: Node, started: number) => Promise<Work[]>;
  fail: (n: Node, summary: string, detail?: string) => void;
  /** After each group of writes (the state is saved). */
  afterWrite: () => void;
  /** Before the first cloud call. */
  beforeFirstWrite: () => void;
  /** Before each write is sent: its intent recorded durably (./intents.ts). What it returns hears
   *  the write's outcome. A rejection fails the group's changes unwritten. */
  beforeWrite?: (kind: PolicyKind, policy: string, group: Work[]) => Promise<WriteTicket>;
}

/** A write's intent, told how the write ended. */
export interface WriteTicket {
  /** Written (or its edits found there), and every change of its group recorded in the state. */
  recorded(): void;
  /** Not written, or not known to be (`uncertain`: it may have landed). */
  failed(uncertain: boolean): void;
}

const NO_TICKET: WriteTicket = { recorded: () => {}, failed: () => {} };

export interface SchedulerOutcome {
  skipped: string[];
  interrupted: boolean;
}

export class Scheduler {
  private readonly inflight = new Set<Promise<void>>();
  /** Policies being written ("{kind} {name}"). */
  private readonly busy = new Set<string>();
  /** Work waiting for its write, per write group in arrival order (`seq` numbers arrivals). */
  private readonly queued = new Map<string, { seq: number; w: Work }[]>();
  private readonly groups: PolicyGraph;
  private queuedCount = 0;
  private arrivals = 0;
  private readonly remaining = new Map<Node, number>();
  private readonly startedAt = new Map<Node, number>();
  /** The pieces of a cross-object replacement still to run, after the first (with their index). */
  private readonly pieces = new Map<Node, { w: Work; index: number }[]>();
  private wake: () => void = () => {};
  private warmed = false;
  private readonly outcome: SchedulerOutcome = { skipped: [], interrupted: false };

  constructor(private readonly x: SchedulerContext) {
    this.groups = new PolicyGraph(x.nodes);
  }

  async run(): Promise<SchedulerOutcome> {
    this.x.signal?.addEventListener("abort", () => this.wake(), { once: true });
    // The nodes still pending, in graph order: a node never becomes pending again, so the scans
    // need not visit the others (scanning every node at each wake-up was quadratic).
    let pending = [...this.x.nodes.values()];
    for (;;) {
      pending = pending.filter((n) => n.status === "pending");
      this.skipBlocked(pending);
      if (this.x.signal?.aborted) this.outcome.interrupted = true;
      if (!this.outcome.interrupted) {
        await this.startReady(pending);
        this.dispatch(false);
        // Never reached when the policy graph is right: work waits for a change that cannot come.
        if (this.inflight.size === 0 && this.queuedCount > 0 && !pending.some((n) => this.ready(n)))
          this.dispatch(true);
      }
      if (!(await this.waitForProgress(pending))) break;
    }
    if (this.outcome.interrupted) this.reportNotStarted();
    return this.outcome;
  }

  /** Waits for a call to finish (or an abort); false when nothing is left to do. */
  private async waitForProgress(pending: Node[]): Promise<boolean> {
    const runnable = !this.outcome.interrupted && pending.some((n) => this.ready(n));
    if (this.inflight.size === 0 && !runnable && (this.queuedCount === 0 || this.outcome.interrupted)) return false;
    if (this.inflight.size === 0 && (runnable || this.queuedCount)) return true;
    if (this.x.signal?.aborted && !this.outcome.interrupted) return true;
    await new Promise<void>((res) => (this.wake = res));
    return true;
  }

  private ready(n: Node): boolean {
    if (n.status !== "pending") return false;
    for (const k of n.deps) {
      const s = this.x.nodes.get(k)!.status;
      if (s !== "done" && !(s === "running" && this.groups.sharesWrite(n, k))) return false;
    }
    return true;
  }

  private blocked(n: Node): boolean {
    return [...n.deps].some((k) => ["failed", "skipped"].includes(this.x.nodes.get(k)!.status));
  }

  /** Skips what can no longer run, transitively (repeats until nothing changes). */
  private skipBlocked(pending: Node[]): void {
    for (let changed = true; changed;) {
      changed = false;
      for (const n of pending) {
        if (n.status !== "pending" || !this.blocked(n)) continue;
        this.skip(n);
        changed = true;
      }
    }
  }

  private skip(n: Node): void {
    n.status = "skipped";
    this.groups.settle(n);
    // The other half of a replacement whose first half failed: that resource failed, it is not
    // also a resource skipped.
    const failedHalf = (k: string) => {
      const d = this.x.nodes.get(k)!;
      return d.status === "failed" && d.change.address === n.change.address;
    };
    if ([...n.deps].some(failedHalf)) return;
    this.outcome.skipped.push(n.change.address);
    this.x.emit({ type: "step", address: n.change.address, action: n.action, phase: "skipped" });
  }

  private async startReady(pending: Node[]): Promise<void> {
    for (const n of pending) {
      if (!this.ready(n)) continue;
      n.status = "running";
      const t0 = Date.now();
      this.startedAt.set(n, t0);
      this.x.emit({
        type: "step",
        address: n.change.address,
        action: n.action,
        phase: "start",
        ...(n.change.policy ? { policy: n.change.policy } : {}),
      });
      const works = await this.x.prepare(n, t0);
      if ((n.status as Node["status"]) === "done")
        this.x.emit({ type: "step", address: n.change.address, action: n.action, phase: "done", ms: Date.now() - t0 });
      if (n.status !== "running") {
        this.groups.settle(n);
        continue;
      }
      this.groups.settle(n, works.length);
      this.remaining.set(n, works.length);
      if (works.length === 0) {
        n.status = "done";
        continue;
      }
      if (works.length > 1)
        this.pieces.set(
          n,
          works.slice(1).map((w, i) => ({ w, index: i + 1 })),
        );
      this.enqueue(works[0]!, 0);
    }
  }

  private enqueue(w: Work, index: number): void {
    const k = `${w.kind} ${w.policy}`;
    const group = this.groups.arrive(w.node, index, k);
    // Nothing left to change on this policy (every revoke is held by another resource).
    if (w.mods.length === 0) return this.complete(w, this.x.live?.get(k));
    let q = this.queued.get(group);
    if (!q) this.queued.set(group, (q = []));
    q.push({ seq: this.arrivals++, w });
    this.queuedCount++;
  }

  /** One read-modify-write per write group whose work has all arrived (`force`: has arrived so
   *  far) and whose policy is not being written; groups in the order their first work arrived. */
  private dispatch(force: boolean): void {
    const heads: { seq: number; g: string; k: string }[] = [];
    for (const [g, q] of this.queued) {
      const k = `${q[0]!.w.kind} ${q[0]!.w.policy}`;
      if (!this.busy.has(k) && (force || this.groups.complete(g))) heads.push({ seq: q[0]!.seq, g, k });
    }
    if (heads.length > 0 && !this.warmed) {
      this.warmed = true;
      this.x.beforeFirstWrite();
    }
    heads.sort((a, b) => a.seq - b.seq);
    for (const { g, k } of heads) {
      if (this.busy.has(k)) continue;
      const taken = this.queued.get(g)!;
      this.queued.delete(g);
      this.queuedCount -= taken.length;
      const group = taken.map((e) => e.w);
      this.busy.add(k);
      this.track(this.runGroup(group[0]!.kind, group[0]!.policy, group).finally(() => this.busy.delete(k)));
    }
  }

  private track(p: Promise<void>): void {
    const t = p.finally(() => {
      this.inflight.delete(t);
      this.x.afterWrite();
      this.wake();
    });
    this.inflight.add(t);
  }

  private async runGroup(kind: PolicyKind, policy: string, group: Work[]): Promise<void> {
    const t0 = Date.now();
    const { emit, signal } = this.x;
    let ticket: WriteTicket | undefined;
    try {
      const initial = this.x.live?.get(`${kind} ${policy}`);
      // Not read by the plan (made without refresh): the plan saw the state's view of it.
      const planned = initial ? undefined : this.x.planned(kind, policy);
      // Queued behind the parallelism limit: after an abort, it does not start at all. Its intent
      // is recorded once its turn comes, just before it is sent.
      const out = await this.x.limit(async () => {
        if (signal?.aborted) return undefined;
        ticket = this.x.beforeWrite ? await this.x.beforeWrite(kind, policy, group) : NO_TICKET;
        // Started once its intent is durable: the write goes out now.
        emit({ type: "policy-write", policy, phase: "start" });
        return this.x.cloud.modifyPolicy(
          kind,
          policy,
          group.flatMap((w) => w.mods),
          initial,
          signal,
          planned,
        );
      });
      if (!out) return this.notStarted(policy, t0);
      this.x.live?.set(`${kind} ${policy}`, out.policy);
      emit({
        type: "policy-write",
        policy,
        phase: "done",
        attempts: out.attempts,
        written: out.written,
        ms: Date.now() - t0,
      });
      for (const w of group) this.complete(w, out.policy);
      ticket?.recorded();
    } catch (e) {
      ticket?.failed((e as { uncertain?: unknown }).uncertain === true);
      await this.groupFailed(kind, policy, group, e, t0);
    }
  }

  private async groupFailed(kind: PolicyKind, policy: string, group: Work[], e: unknown, t0: number): Promise<void> {
    const status = statusOf(e);
    // Stopped by the abort before anything was written: its nodes stay running, reported as
    // interrupted at the end, and the state keeps what it had for them.
    if (status === INTERRUPTED && this.x.signal?.aborted) return this.notStarted(policy, t0);
    this.x.emit({ type: "policy-write", policy, phase: "error", ms: Date.now() - t0 });
    // The object is gone, so is every grant on it: deleting is done.
    if (status === "NOT_FOUND" && group.every((w) => w.node.action === "delete"))
      return group.forEach((w) => this.complete(w, undefined));
    if (group.length > 1 && (status === "INVALID_ARGUMENT" || status === "FAILED_PRECONDITION")) {
      // One bad change must not sink its neighbours: retry each change on its own (in arrival
      // order, so a change sharing the write of one it depends on comes after it).
      for (const w of group) {
        if (w.node.status !== "running") continue;
        if (this.blocked(w.node)) this.skip(w.node);
        else await this.runGroup(kind, policy, [w]);
      }
      return;
    }
    const what =
      status === "NOT_FOUND"
        ? `${kindLabel(kind)} ${policy} does not exist`
        : `cannot update the IAM policy of ${policy}`;
    for (const w of group) {
      if (w.node.status !== "running") continue;
      this.x.fail(w.node, what, (e as Error).message);
      this.groups.settle(w.node);
    }
  }

  private notStarted(policy: string, t0: number): void {
    this.x.emit({ type: "policy-write", policy, phase: "interrupted", ms: Date.now() - t0 });
  }

  private complete(w: Work, p: Policy | undefined): void {
    const n = w.node;
    if (n.status !== "running") return;
    w.finish(p);
    const left = (this.remaining.get(n) ?? 1) - 1;
    this.remaining.set(n, left);
    if (left === 0) {
      n.status = "done";
      this.x.emit({
        type: "step",
        address: n.change.address,
        action: n.action,
        phase: "done",
        ms: Date.now() - (this.startedAt.get(n) ?? Date.now()),
        ...(n.change.policy ? { policy: n.change.policy } : {}),
      });
      return;
    }
    // Next piece of a cross-object replacement.
    const next = this.pieces.get(n)?.shift();
    if (next) this.enqueue(next.w, next.index);
  }

  /** Not done: never started, or started but stopped before its write (work still queued, or
   *  refused by the abort). Reported as not started; the state keeps what it had for them. */
  private reportNotStarted(): void {
    for (const n of this.x.nodes.values()) {
      if (n.status === "running")
        this.x.emit({
          type: "step",
          address: n.change.address,
          action: n.action,
          phase: "interrupted",
          ...(n.change.policy ? { policy: n.change.policy } : {}),
        });
      if (n.status === "pending" || n.status === "running") this.outcome.skipped.push(n.change.address);
    }
  }
}
