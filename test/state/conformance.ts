// The state-store conformance suite (after Terraform's statemgr TestFull): what every backend of
// the StateStore contract (src/state/store.ts) must do. A backend's test file calls
// `stateStoreConformance` with a factory that opens fresh, empty stores; `second` opens another
// handle to the same state, as a second process would.
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { newState, serializeState, type State, type StateStore, versionOf } from "../../src/state/index.js";
import { intentIds as ids, writeIntent as intent } from "./helpers.js";

export interface StoreFixture {
  store: StateStore;
  /** Another handle on the same state (another process, another engineer). */
  second: () => StateStore;
  cleanup: () => Promise<void>;
  /**
   * Replaces the stored state's text behind the store's back (a hand edit, a restore from elsewhere); a state was
   * written first.
   */
  plant: (text: string) => Promise<void>;
  /** A store of another stack beside this one (the same directory, the same schema). */
  otherStack: (stack: string) => StateStore;
}

async function conflict(p: Promise<unknown>): Promise<UserError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, "the write must be refused").toBeInstanceOf(UserError);
  expect((e as UserError).diagnostics[0]!.code).toBe("state/conflict");
  return e as UserError;
}

const withResource = (s: State, address: string): State => ({
  ...s,
  resources: [...s.resources, { address, type: "t", id: address, inputs: {}, outputs: {}, dependencies: [] }],
});

export interface ConformanceOptions {
  /**
   * The backend's locks belong to a live session that force-unlock cannot end (PostgreSQL's
   * advisory locks): force-unlock with the right ID is refused while the holder lives, and the
   * lock goes when the holder releases it (or dies).
   */
  liveLocks?: boolean;
}

export function stateStoreConformance(
  backend: string,
  open: (stack: string) => Promise<StoreFixture>,
  options: ConformanceOptions = {},
): void {
  const use = async (fn: (f: StoreFixture) => Promise<void>) => {
    const f = await open("conformance");
    try {
      await fn(f);
    } finally {
      await f.cleanup();
    }
  };

  describe(`state store conformance: ${backend}`, () => {
    it("describes itself without secrets, and reads nothing before the first write", () =>
      use(async ({ store }) => {
        expect(store.describe()).toMatch(/\S/);
        expect(await store.read()).toBeUndefined();
      }));

    it("writes, reads back exactly what it returned, and counts serials from 1", () =>
      use(async ({ store, second }) => {
        const first = await store.write(withResource(newState("conformance"), "a"), undefined);
        expect(first.serial).toBe(1);
        expect(await store.read()).toEqual(first);
        expect(await second().read()).toEqual(first);
        const next = await store.write(withResource(first, "b"), versionOf(first));
        expect(next.serial).toBe(2);
        expect(next.lineage).toBe(first.lineage);
        expect((await second().read())!.resources.map((r) => r.address)).toEqual(["a", "b"]);
      }));

    it("compare-and-swap: a stale or missing expectation is refused and writes nothing", () =>
      use(async ({ store, second }) => {
        const v1 = await store.write(newState("conformance"), undefined);
        const v2 = await second().write(withResource(v1, "theirs"), versionOf(v1));
        await conflict(store.write(withResource(v1, "mine"), versionOf(v1)));
        await conflict(store.write(withResource(v1, "mine"), undefined));
        expect(await store.read()).toEqual(v2);
      }));

    it("a state of another lineage is refused", () =>
      use(async ({ store }) => {
        const v1 = await store.write(newState("conformance"), undefined);
        const foreign = newState("conformance");
        const e = await conflict(store.write(foreign, versionOf(v1)));
        expect(e.diagnostics[0]!.summary).toContain(v1.lineage);
        expect(await store.read()).toEqual(v1);
      }));

    it("a stored state with a duplicated resource address is refused when read, naming the address", () =>
      use(async ({ store, second, plant }) => {
        const v1 = await store.write(withResource(withResource(newState("conformance"), "a"), "b"), undefined);
        const dup: State = { ...v1, resources: [...v1.resources, { ...v1.resources[0]!, id: "someone-else" }] };
        await plant(serializeState(dup));
        for (const s of [store, second()]) {
          const e = await s.read().then(
            () => undefined,
            (x: unknown) => x,
          );
          expect(e, "the read must be refused").toBeInstanceOf(UserError);
          expect((e as UserError).diagnostics[0]!.summary).toMatch(
            /resource address "a" .*resources\[0\].*resources\[2\]/,
          );
          // How to get the previous version back, as this backend keeps it.
          expect((e as UserError).diagnostics[0]!.detail).toMatch(
            backend === "local file" ? /\.backup/ : /state history[\s\S]*state push/,
          );
        }
      }));

    it("two writers racing from the same version: exactly one wins", () =>
      use(async ({ store, second }) => {
        const v1 = await store.write(newState("conformance"), undefined);
        const results = await Promise.allSettled([
          store.write(withResource(v1, "one"), versionOf(v1)),
          second().write(withResource(v1, "two"), versionOf(v1)),
        ]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(UserError);
        expect((await store.read())!.serial).toBe(2);
      }));

    it("one lock holder at a time, named to the next; released locks can be taken; release is idempotent", () =>
      use(async ({ store, second }) => {
        const lock = await store.lock("apply");
        expect(lock.holder).toMatchObject({ operation: "apply" });
        expect(lock.holder.id).toMatch(/\S/);
        expect(lock.holder.who).toMatch(/@/);
        expect(Date.parse(lock.holder.since)).not.toBeNaN();
        const refused = await second()
          .lock("plan")
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(refused).toBeInstanceOf(UserError);
        expect(String((refused as UserError).message)).toContain(lock.holder.id);
        await lock.release();
        await lock.release();
        const again = await second().lock("destroy");
        await again.release();
      }));

    it("a waiting writer gets the lock once it is released", () =>
      use(async ({ store, second }) => {
        const lock = await store.lock("apply");
        setTimeout(() => void lock.release(), 300);
        const waited = await second().lock("apply", { timeoutMs: 10_000 });
        expect(waited.holder.id).not.toBe(lock.holder.id);
        await waited.release();
      }));

    it("where history is kept: every write is a version with its meta, and old versions stay readable", () =>
      use(async ({ store }) => {
        if (!store.history || !store.version) return;
        const digest = `sha256:${"0".repeat(64)}`;
        const v1 = await store.write(withResource(newState("conformance"), "a"), undefined, {
          operation: "apply",
          planDigest: digest,
          access: { granted: 2, revoked: 1 },
        });
        const v2 = await store.write(withResource(v1, "b"), versionOf(v1), { operation: "state mv" });
        const h = await store.history();
        expect(h.map((r) => r.serial)).toEqual([1, 2]);
        expect(h[0]).toMatchObject({
          operation: "apply",
          planDigest: digest,
          access: { granted: 2, revoked: 1 },
          lineage: v1.lineage,
        });
        expect(h[0]!.actor).toMatch(/\S/);
        expect(Date.parse(h[0]!.written)).not.toBeNaN();
        expect(h[1]).toMatchObject({ operation: "state mv" });
        expect(h[1]!.access).toBeUndefined();
        expect(await store.version(1)).toEqual(v1);
        expect(await store.version(2)).toEqual(v2);
        expect(await store.version(7)).toBeUndefined();
      }));

    it(
      "write intents: none on a new store; recorded ones are pending in " +
        "order, as recorded, for another handle too",
      () =>
        use(async ({ store, second }) => {
          expect(await store.pendingIntents()).toEqual([]);
          await store.recordIntents([]);
          await store.clearIntents([]);
          expect(await store.pendingIntents()).toEqual([]);
          // IDs out of their sort order, and a second record after the first: kept in recording order.
          const [b, a, c] = [intent("b-first"), intent("a-second"), intent("c-third")];
          await store.recordIntents([b, a]);
          await store.recordIntents([c]);
          expect(await store.pendingIntents()).toEqual([b, a, c]);
          // Durable: another handle (another process) reads them back.
          expect(await second().pendingIntents()).toEqual([b, a, c]);
          // They are beside the state, not in it.
          expect(await store.read()).toBeUndefined();
        }),
    );

    it("write intents: clearing some leaves the others; clearing all leaves none; recording after that works", () =>
      use(async ({ store, second }) => {
        const v1 = await store.write(newState("conformance"), undefined);
        const [one, two, three] = [intent("one"), intent("two"), intent("three")];
        await store.recordIntents([one, two, three]);
        await store.clearIntents(["two"]);
        expect(ids(await store.pendingIntents())).toEqual(["one", "three"]);
        expect(ids(await second().pendingIntents())).toEqual(["one", "three"]);
        // An ID not pending (already cleared, or never recorded) is no error.
        await second().clearIntents(["two", "never-recorded"]);
        expect(ids(await store.pendingIntents())).toEqual(["one", "three"]);
        await second().clearIntents(["one", "three"]);
        expect(await store.pendingIntents()).toEqual([]);
        expect(await second().pendingIntents()).toEqual([]);
        const four = intent("four");
        await store.recordIntents([four]);
        expect(await second().pendingIntents()).toEqual([four]);
        await store.clearIntents(["four"]);
        expect(await store.pendingIntents()).toEqual([]);
        // The state is untouched by any of it.
        expect(await store.read()).toEqual(v1);
      }));

    it("write intents are recorded under the lock, and are a stack's own", () =>
      use(async ({ store, second, otherStack }) => {
        const lock = await store.lock("apply");
        await store.recordIntents([intent("mine")]);
        await lock.release();
        const other = otherStack("conformance-other");
        expect(await other.pendingIntents()).toEqual([]);
        await other.recordIntents([intent("theirs")]);
        expect(ids(await store.pendingIntents())).toEqual(["mine"]);
        expect(ids(await other.pendingIntents())).toEqual(["theirs"]);
        // Clearing an ID of another stack's intent clears nothing here, and nothing there.
        await second().clearIntents(["theirs"]);
        expect(ids(await other.pendingIntents())).toEqual(["theirs"]);
        await other.clearIntents(["mine", "theirs"]);
        expect(ids(await store.pendingIntents())).toEqual(["mine"]);
        expect(await other.pendingIntents()).toEqual([]);
      }));

    it("force-unlock needs the holder's ID", () =>
      use(async ({ store, second }) => {
        const lock = await store.lock("apply");
        await expect(second().forceUnlock("not-the-id")).rejects.toBeInstanceOf(UserError);
        if (options.liveLocks) {
          const refused = await second()
            .forceUnlock(lock.holder.id)
            .then(
              () => undefined,
              (e: unknown) => e,
            );
          expect(refused, "a live holder's lock is not force-unlocked").toBeInstanceOf(UserError);
          await expect(second().lock("apply")).rejects.toBeInstanceOf(UserError);
          await lock.release();
        } else await second().forceUnlock(lock.holder.id);
        const next = await second().lock("apply");
        await next.release();
      }));
  });
}
