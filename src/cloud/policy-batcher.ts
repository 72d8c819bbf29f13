// Merges concurrent edits of the same policy into one read-modify-write and runs different
// policies in parallel, bounded.
import pLimit, { type LimitFunction } from "p-limit";
import type { PolicyModification } from "../iam/index.js";
import type { CloudClient, PolicyKind } from "./client.js";
import { modifyPolicy, type ModifyOptions, type ModifyResult } from "./policy-engine.js";

export interface PolicyBatcherOptions {
  /** Policies modified at once; default 10. */
  parallelism?: number;
  /** Options for every modifyPolicy call (retry bounds, backoff, sleep…); `initial` is not allowed here. */
  modify?: Omit<ModifyOptions, "initial">;
}

interface Waiter {
  mods: PolicyModification[];
  resolve: (r: ModifyResult) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  kind: PolicyKind;
  name: string;
  /** Submissions waiting for the next round. */
  pending: Waiter[];
  /** A round is queued (waiting for a parallelism slot) or running. */
  busy: boolean;
}

export interface BatcherStats {
  /** submit() calls. */
  submissions: number;
  /** modifyPolicy calls made (one per merged round). */
  rounds: number;
}

export class PolicyBatcher {
  private readonly client: CloudClient;
  private readonly limit: LimitFunction;
  private readonly modify: Omit<ModifyOptions, "initial">;
  private readonly slots = new Map<string, Slot>();
  readonly stats: BatcherStats = { submissions: 0, rounds: 0 };

  constructor(client: CloudClient, opts: PolicyBatcherOptions = {}) {
    const parallelism = opts.parallelism ?? 10;
    if (!Number.isInteger(parallelism) || parallelism < 1) throw new RangeError(`parallelism must be an integer ≥ 1, got ${parallelism}`);
    this.client = client;
    this.limit = pLimit(parallelism);
    this.modify = opts.modify ?? {};
  }

  /**
   * Queues `mods` for the policy of (kind, name). Every submission for that policy that arrives
   * before its read-modify-write starts shares it (one read, one write); later ones wait for the
   * next round. Resolves with the shared result, or rejects with the shared error.
   */
  submit(kind: PolicyKind, name: string, mods: PolicyModification[]): Promise<ModifyResult> {
    this.stats.submissions++;
    const key = `${kind}\u0000${name}`;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { kind, name, pending: [], busy: false };
      this.slots.set(key, slot);
    }
    const promise = new Promise<ModifyResult>((resolve, reject) => slot.pending.push({ mods: [...mods], resolve, reject }));
    this.schedule(key, slot);
    return promise;
  }

  /** Number of policies with a round queued or running. */
  get active(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.busy) n++;
    return n;
  }

  private schedule(key: string, slot: Slot): void {
    if (slot.busy || slot.pending.length === 0) return;
    slot.busy = true;
    void this.limit(() => this.round(key, slot));
  }

  private async round(key: string, slot: Slot): Promise<void> {
    // Let submissions made in the same turn of the event loop join this round.
    await new Promise<void>((r) => setImmediate(r));
    const batch = slot.pending.splice(0);
    try {
      if (batch.length === 0) return;
      this.stats.rounds++;
      const mods = batch.flatMap((w) => w.mods);
      try {
        const result = await modifyPolicy(this.client, slot.kind, slot.name, mods, this.modify);
        for (const w of batch) w.resolve(result);
      } catch (e) {
        for (const w of batch) w.reject(e);
      }
    } finally {
      slot.busy = false;
      if (slot.pending.length > 0) this.schedule(key, slot);
      else this.slots.delete(key);
    }
  }
}
