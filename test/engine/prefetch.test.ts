// The session's prefetch (src/engine/prefetch.ts): reads started ahead of planning are handed
// over once, never read twice, paced by one --parallelism limit with the planner's later reads,
// and stopped (nothing more sent) by the abort signal or when planning ends.
import { describe, expect, it } from "vitest";
import { prefetching } from "../../src/engine/prefetch.js";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { Federation, Policy } from "../../src/generated/schemas.js";

const KIND = "restorePlan" as const;
const ref = (i: number) => ({ kind: KIND, name: `projects/p/locations/l/restorePlans/r${i}` });

/** A cloud whose reads wait until `release` lets them answer; it counts reads and the most at once. */
function heldCloud() {
  const calls: string[] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const held = async (name: string) => {
    calls.push(name);
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
  };
  const cloud: CloudPort = {
    async getIamPolicy(_kind, name, signal) {
      if (signal?.aborted) throw Object.assign(new Error("not sent"), { status: "CANCELLED" });
      await held(name);
      if (name.endsWith("/bad")) throw Object.assign(new Error("denied"), { status: "PERMISSION_DENIED" });
      return { etag: name, bindings: [] } satisfies Policy;
    },
    async getFederation(name) {
      await held(name);
      return { name } as Federation;
    },
    modifyPolicy: () => Promise.reject(new Error("unused")),
  };
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    cloud,
    calls,
    most: () => most,
    /** Answers every read waiting now, then lets the next ones start. */
    async release() {
      for (const w of waiting.splice(0)) w();
      await tick();
      await tick();
    },
    async drain() {
      while (waiting.length) await this.release();
    },
  };
}

describe("prefetching", () => {
  it("starts each policy once, hands each started read over once, and reads again only after that", async () => {
    const c = heldCloud();
    const pf = prefetching(c.cloud, 10);
    await pf.start([ref(1), ref(2), ref(1), ref(3), ref(2)]);
    expect(c.calls).toEqual([ref(1).name, ref(2).name, ref(3).name]);
    const taken = pf.port.takeStarted!(KIND, ref(2).name);
    expect(taken).toBeDefined();
    expect(pf.port.takeStarted!(KIND, ref(2).name)).toBeUndefined();
    expect(pf.port.takeStarted!(KIND, ref(9).name)).toBeUndefined();
    await taken!.sent;
    await c.drain();
    expect(await taken!.policy).toEqual({ etag: ref(2).name, bindings: [] });
    // Starting it again does not read it again: it was started once.
    await pf.start([ref(2)]);
    expect(c.calls).toHaveLength(3);
    pf.dispose();
  });

  it(
    "never has more than `parallelism` reads at once, counting the " +
      "reads asked of its port later (data sources too)",
    async () => {
      const c = heldCloud();
      const pf = prefetching(c.cloud, 3);
      await pf.start(Array.from({ length: 7 }, (_, i) => ref(i)));
      const later = [
        pf.port.getIamPolicy(KIND, ref(20).name),
        pf.port.getFederation("projects/p/locations/l/federations/f"),
        pf.port.getIamPolicy(KIND, ref(21).name),
      ];
      expect(c.calls).toHaveLength(3);
      await c.drain();
      await Promise.all(later);
      expect(c.calls).toHaveLength(10);
      expect(c.most()).toBe(3);
      // The reads started ahead went first, in order.
      expect(c.calls.slice(0, 7)).toEqual(Array.from({ length: 7 }, (_, i) => ref(i).name));
      pf.dispose();
    },
  );

  it("sends nothing more once the signal aborts: the reads not yet sent fail as interrupted", async () => {
    const c = heldCloud();
    const abort = new AbortController();
    const pf = prefetching(c.cloud, 2, abort.signal);
    await pf.start(Array.from({ length: 5 }, (_, i) => ref(i)));
    expect(c.calls).toHaveLength(2);
    abort.abort();
    const queued = pf.port.takeStarted!(KIND, ref(4).name)!;
    await c.drain();
    expect(c.calls).toHaveLength(2);
    await expect(queued.policy).rejects.toMatchObject({ status: "CANCELLED" });
    pf.dispose();
  });

  it("on dispose sends none of the reads nobody took, and a failed read nobody took is no crash", async () => {
    const c = heldCloud();
    const pf = prefetching(c.cloud, 1);
    await pf.start([{ kind: KIND, name: "projects/p/locations/l/restorePlans/bad" }, ref(1), ref(2)]);
    expect(c.calls).toHaveLength(1);
    pf.dispose();
    await c.drain();
    // The failed read (PERMISSION_DENIED) and the refused ones were never taken: no unhandled rejection.
    expect(c.calls).toEqual(["projects/p/locations/l/restorePlans/bad"]);
  });
});
