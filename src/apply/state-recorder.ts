// The state as apply changes it, and its saves: coalesced (one at a time, the next covering every
// step done meanwhile), paced when a save is slow (a large state blocks the event loop while it is
// serialised, and back-to-back saves would starve the cloud calls), and only when something
// changed (a failed apply that changed nothing leaves the state file, its .backup and saved plans
// valid).
import type { State, StateResource } from "../generated/schemas.js";
import type { Emit } from "../contracts/events.js";
import { jsonEqual } from "../plan/compare.js";
import { pushAll } from "../base/arrays.js";
import { parsedState, sealedCopy, serializeState, stateProblems } from "../state/format.js";

/** A save slower than this (ms) delays the next one by SAVE_PAUSE_FACTOR times its duration. */
const SLOW_SAVE_MS = 20;
const SAVE_PAUSE_FACTOR = 20;

export class StateRecorder {
  private readonly current: State;
  /** address -> index of its entry (a linear search per step is quadratic); built on first use.
   *  An address names one resource (a state with two entries for one is refused when read). */
  private indexOf: Map<string, number> | undefined;
  /** Entries removed but still in the list, as holes (undefined): removing each of 100,000
   *  resources with a copy of the list was quadratic. The list is compacted before anyone sees it. */
  private holes = 0;
  private version = 0;
  private savedVersion = 0;
  private saving: Promise<void> | undefined;
  private last = { ms: 0, end: 0 };
  private hurry: (() => void) | undefined;
  /** Intents (./intents.ts) whose writes are recorded in the state, not yet saved. */
  private covered: string[] = [];
  /** Called with the intents a save made durable. */
  private onCovered: (ids: string[]) => void = () => {};
  constructor(
    initial: State,
    private readonly persist: (state: State) => Promise<State>,
    private readonly emit: Emit,
    /** Called with each resource recorded (the executor's scope learns its outputs). */
    private readonly onRecord: (r: StateResource) => void = () => {},
  ) {
    this.current = structuredClone(initial);
  }

  /** The state as recorded so far (the same object throughout). */
  get state(): State {
    this.compact();
    return this.current;
  }

  private compact(): void {
    if (!this.holes) return;
    this.current.resources = this.current.resources.filter((x) => x !== undefined);
    this.holes = 0;
    this.indexOf = undefined;
  }

  private find(address: string): number {
    if (!this.indexOf) {
      const index = new Map<string, number>();
      this.current.resources.forEach((x, i) => {
        if (x !== undefined && !index.has(x.address)) index.set(x.address, i);
      });
      this.indexOf = index;
    }
    return this.indexOf.get(address) ?? -1;
  }

  set(r: StateResource): void {
    const i = this.find(r.address);
    this.onRecord(r);
    if (i >= 0 && jsonEqual(this.current.resources[i], r)) return;
    this.version++;
    if (i >= 0) this.current.resources[i] = r;
    else this.indexOf!.set(r.address, this.current.resources.push(r) - 1);
  }

  /** The `moved:` renames (old → new address), in one pass over the resources: each resource and
   *  every dependency on it take its new address. As if made one after another: a rename whose
   *  source is gone or whose target is taken by then is not made; renaming each of 100,000
   *  resources with a pass of its own was quadratic. */
  renameAll(renames: ReadonlyMap<string, string>): void {
    const final = new Map<string, string>();
    // The original address of each address a rename has taken, and those renames have left.
    const origin = new Map<string, string>();
    const vacated = new Set<string>();
    const present = (a: string) => origin.has(a) || (!vacated.has(a) && this.find(a) >= 0);
    for (const [from, to] of renames) {
      if (!present(from) || present(to)) continue;
      const first = origin.get(from) ?? from;
      final.set(first, to);
      origin.delete(from);
      origin.set(to, first);
      vacated.add(from);
    }
    if (!final.size) return;
    this.version++;
    this.compact();
    const name = (a: string) => final.get(a) ?? a;
    this.current.resources = this.current.resources.map((x) => ({
      ...x,
      address: name(x.address),
      dependencies: x.dependencies.map(name),
    }));
    this.indexOf = undefined;
  }

  /** The outcome of intent `id`'s write is recorded: the intent is settled once a save holds it. */
  cover(id: string): void {
    this.covered.push(id);
    this.version++;
  }

  /** `fn` hears of the intents each save made durable. */
  whenCovered(fn: (ids: string[]) => void): void {
    this.onCovered = fn;
  }

  /** The resource at `address`, if it has this type, is no longer in the state. */
  remove(address: string, type: string): void {
    this.version++;
    const i = this.find(address);
    if (i < 0 || this.current.resources[i]!.type !== type) return;
    (this.current.resources as (StateResource | undefined)[])[i] = undefined;
    this.indexOf!.delete(address);
    this.holes++;
  }

  /** The outputs, and which of them are computed from a secret. */
  setOutputs(outputs: Record<string, unknown>, sensitive: string[] = []): void {
    const names = sensitive.filter((n) => Object.hasOwn(outputs, n)).sort();
    if (jsonEqual(this.state.outputs, outputs) && jsonEqual(this.state.sensitive_outputs ?? [], names)) return;
    this.state.outputs = outputs;
    if (names.length) this.state.sensitive_outputs = names;
    else delete this.state.sensitive_outputs;
    this.version++;
  }

  /** A deep copy of the state, as structuredClone would make. Each resource is sealed (frozen,
   *  its text kept: resources are replaced, never changed in place, so each is copied, checked and
   *  serialised once) and the state keeps the sealed copy, not a second one. */
  snapshot(): State {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(this.state))
      out[k] = k === "resources" && Array.isArray(v) ? this.sealResources() : structuredClone(v);
    return out as unknown as State;
  }

  private sealResources(): StateResource[] {
    const resources = this.state.resources;
    for (let i = 0; i < resources.length; i++) resources[i] = sealedCopy(resources[i]!);
    return resources.slice();
  }

  /** Before the first cloud call: copy, serialise and check what the first save will hold (with a
   *  large prior state, doing it in that save held up the calls in flight). */
  warm(): void {
    const snap = this.snapshot();
    serializeState(snap);
    stateProblems(snap);
    parsedState(snap);
  }

  private delay(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.hurry = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.hurry = done;
    });
  }

  /** Saves what changed since the last save (after it, if one is running). */
  save(final = false): Promise<void> {
    if (this.saving) return this.saving.then(() => (this.version !== this.savedVersion ? this.save(final) : undefined));
    if (this.version === this.savedVersion) return Promise.resolve();
    const write = () => {
      const v = this.version;
      const t0 = Date.now();
      const ids = this.covered.splice(0);
      return this.persist(this.snapshot()).then(
        (written) => {
          this.savedVersion = v;
          this.last = { ms: Date.now() - t0, end: Date.now() };
          this.onCovered(ids);
          return written;
        },
        (e: unknown) => {
          // Not saved: they wait for the next save (this one's first, in order).
          this.covered = pushAll(ids, this.covered);
          throw e;
        },
      );
    };
    const wait =
      final || this.last.ms < SLOW_SAVE_MS ? 0 : this.last.end + SAVE_PAUSE_FACTOR * this.last.ms - Date.now();
    this.saving = (wait > 0 ? this.delay(wait).then(write) : write()).then(
      (written) => {
        this.state.serial = written.serial;
        this.state.lineage = written.lineage;
        this.emit({ type: "state-saved", serial: written.serial });
        this.saving = undefined;
      },
      (e) => {
        this.saving = undefined;
        throw e;
      },
    );
    return this.saving;
  }

  /** Runs a delayed save now, waits for every save, then saves what is left. */
  async flush(): Promise<void> {
    for (;;) {
      this.hurry?.();
      if (!this.saving) break;
      await this.saving;
    }
    await this.save(true);
    // The state apply returns (the same object) has no holes, whatever the last save found to do.
    this.compact();
  }
}
