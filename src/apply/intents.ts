// Intent before every write: what converge writes is converge's, whatever happens to the process
// or the network. Before a policy write is sent, its intent (the resources' modifications, and what
// the state records if it lands) is durably recorded in the state store; once a saved state covers
// the write's outcome, or the write is known not to have landed, the intent is cleared. An intent
// still pending when apply ends (a crash, a kill, an answer lost for good) is settled by the next
// plan or apply against the live policy (../engine/settle.ts): a grant it added and found live is
// converge's own, never adopted.
//
// Recording is group-committed: the intents of writes that start while a record is being made
// durable share the next one (one fsync or one transaction for many writes).
import { randomUUID } from "node:crypto";
import type { IntentChange, WriteIntent } from "../generated/schemas.js";
import type { StateStore } from "../state/store.js";

export type IntentStore = Pick<StateStore, "recordIntents" | "clearIntents">;

export class IntentLog {
  private batch: { intent: WriteIntent; done: (e?: unknown) => void }[] = [];
  private recording: Promise<void> | undefined;
  private clearing: Promise<void> = Promise.resolve();
  private clearFailed: unknown;

  constructor(
    private readonly store: IntentStore,
    /** The digest of the plan being applied, when it is known without sealing it again. */
    private readonly planDigest: () => string | undefined = () => undefined,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records the intent of a write of `changes` on one policy; resolves with its ID once it is
   *  durable (the write may start), rejects when it could not be recorded (the write must not). */
  begin(kind: string, policy: string, changes: IntentChange[]): Promise<string> {
    const digest = this.planDigest();
    const intent: WriteIntent = {
      id: randomUUID(),
      created: this.now().toISOString(),
      ...(digest ? { plan_digest: digest } : {}),
      kind,
      policy,
      changes,
    };
    return new Promise<string>((resolve, reject) => {
      this.batch.push({ intent, done: (e) => (e === undefined ? resolve(intent.id) : reject(e)) });
      this.recording ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.batch.length) {
      const taken = this.batch;
      this.batch = [];
      try {
        await this.store.recordIntents(taken.map((t) => t.intent));
        for (const t of taken) t.done();
      } catch (e) {
        for (const t of taken) t.done(e ?? new Error("the intent was not recorded"));
      }
    }
    this.recording = undefined;
  }

  /** These intents are settled (a saved state covers them, or their writes did not land). A
   *  failure leaves them pending: the next plan settles them against the live policies. */
  clear(ids: readonly string[]): void {
    if (!ids.length) return;
    this.clearing = this.clearing.then(() =>
      this.store.clearIntents(ids).catch((e: unknown) => {
        this.clearFailed ??= e;
      }),
    );
  }

  /** Waits for the clears asked so far; true when every one succeeded. */
  async flush(): Promise<boolean> {
    await this.clearing;
    return this.clearFailed === undefined;
  }
}
