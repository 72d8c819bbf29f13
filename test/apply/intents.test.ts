// Intent before every write (src/apply/intents.ts) and the settlement of what an interrupted run
// left pending (src/engine/settle.ts): real planner, real executor, a recording cloud of plain
// functions over an in-memory world, and an intent store of plain functions.
import { describe, expect, it } from "vitest";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import { settleIntents } from "../../src/engine/settle.js";
import type { Policy, State, WriteIntent } from "../../src/generated/schemas.js";
import { EP, RP, epName } from "../fixtures/builders.js";
import { HEAD, empty, member, newState, planFor, recordingCloud, run } from "./harness.js";
import type { IntentStore } from "../../src/apply/intents.js";

const EP2 = epName("scorer");
const USER = "roles/aiplatform.user";
const STACK =
  HEAD + member("a", "churn", USER, "user:a@example.com") + member("b", "scorer", USER, "user:b@example.com");

/** An intent store recording every call in `log` (shared with the cloud's calls). */
function intentStore(log: string[], o: { failRecord?: boolean } = {}) {
  const pending = new Map<string, WriteIntent>();
  const store: IntentStore = {
    recordIntents: async (intents) => {
      await new Promise((r) => setTimeout(r, 2));
      if (o.failRecord) throw new Error("disk full");
      for (const i of intents) {
        pending.set(i.id, structuredClone(i));
        log.push(`intent ${i.policy}`);
      }
    },
    clearIntents: async (ids) => {
      for (const id of ids) {
        log.push(`clear ${pending.get(id)?.policy}`);
        pending.delete(id);
      }
    },
  };
  return { store, pending };
}

/** A port over `world` that reads through `cloud`'s world. */
const reading = (world: Record<string, Policy>): CloudPort => recordingCloud(world).port;

describe("intents of apply's writes", () => {
  it("each write's intent is durable before the write starts, and cleared once a saved state covers it", async () => {
    const world = { [EP]: empty("ep-0"), [EP2]: empty("ep2-0") };
    const { p, live } = await planFor(STACK, undefined, world);
    const log: string[] = [];
    const cloud = recordingCloud(world, { during: (c) => log.push(`write ${c.name}`) });
    const { store, pending } = intentStore(log);
    const { result, saves } = await run(p, cloud.port, newState(), { live, intents: store });
    expect(result.failed).toEqual([]);
    for (const name of [EP, EP2]) expect(log.indexOf(`intent ${name}`)).toBeLessThan(log.indexOf(`write ${name}`));
    for (const name of [EP, EP2]) expect(log.indexOf(`clear ${name}`)).toBeGreaterThan(log.indexOf(`write ${name}`));
    expect(pending.size).toBe(0);
    expect(
      saves
        .at(-1)!
        .resources.map((r) => r.address)
        .sort(),
    ).toEqual(["a", "b"]);
  });

  it("a write whose intent cannot be recorded is not sent", async () => {
    const world = { [EP]: empty("ep-0"), [EP2]: empty("ep2-0") };
    const { p, live } = await planFor(STACK, undefined, world);
    const log: string[] = [];
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, newState(), {
      live,
      intents: intentStore(log, { failRecord: true }).store,
    });
    expect(result.failed.map((f) => f.address).sort()).toEqual(["a", "b"]);
    expect(cloud.calls).toEqual([]);
  });

  it("a refused write's intent is cleared; one that may have landed stays pending", async () => {
    const world = { [EP]: empty("ep-0"), [EP2]: empty("ep2-0") };
    const { p, live } = await planFor(STACK, undefined, world);
    const log: string[] = [];
    const cloud = recordingCloud(world, {
      fail: (name) =>
        name === EP
          ? Object.assign(new Error("denied"), { status: "PERMISSION_DENIED" })
          : Object.assign(new Error("the answer was lost and the policy could not be read"), {
              status: "UNAVAILABLE",
              uncertain: true,
            }),
    });
    const { store, pending } = intentStore(log);
    await run(p, cloud.port, newState(), { live, intents: store });
    expect([...pending.values()].map((i) => i.policy)).toEqual([EP2]);
  });
});

describe("settling the intents an interrupted run left pending", () => {
  /** Applies STACK with a save that never completes (the process dies before any save): the
   *  writes land, the state records nothing, every intent stays pending. */
  async function crashed(): Promise<{ world: Record<string, Policy>; pending: WriteIntent[] }> {
    const world = { [EP]: empty("ep-0"), [EP2]: empty("ep2-0"), [RP]: empty("rp-0") };
    const { p, live } = await planFor(STACK, undefined, world);
    const { store, pending } = intentStore([]);
    const cloud = recordingCloud(world);
    const never = () => new Promise<State>(() => {});
    void (await import("../../src/apply/executor.js")).apply(p, {
      cloud: cloud.port,
      state: newState(),
      save: never,
      parallelism: 4,
      live,
      intents: store,
    });
    for (let i = 0; i < 100 && cloud.events.filter((e) => e.startsWith("end")).length < 2; i++)
      await new Promise((r) => setTimeout(r, 5));
    return { world, pending: [...pending.values()] };
  }

  it("records what landed as converge's own (not adopted), with the live etag", async () => {
    const { world, pending } = await crashed();
    expect(pending.map((i) => i.policy).sort()).toEqual([EP, EP2].sort());
    const s = await settleIntents(pending, newState(), "t", reading(world), () => new Date("2026-11-28T00:00:00Z"));
    expect(s.state!.resources.map((r) => [r.address, r.adopted, (r.outputs as { etag?: string }).etag]).sort()).toEqual(
      [
        ["a", undefined, world[EP]!.etag],
        ["b", undefined, world[EP2]!.etag],
      ],
    );
    expect(s.settled.sort()).toEqual(pending.map((i) => i.id).sort());
    expect(s.state!.settled).toEqual({
      at: "2026-11-28T00:00:00.000Z",
      intents: 2,
      landed: 2,
      recorded: ["a", "b"],
      forgotten: [],
    });
    expect(s.diagnostic?.summary).toContain("2 landed, 0 did not");
  });

  it("a write that did not land (or was undone since) records nothing", async () => {
    const { world, pending } = await crashed();
    world[EP] = empty("ep-9"); // someone revoked it since
    const s = await settleIntents(pending, newState(), "t", reading(world));
    expect(s.state!.resources.map((r) => r.address)).toEqual(["b"]);
    expect(s.settled).toHaveLength(2);
  });

  it("the plan after a settlement creates nothing it would adopt", async () => {
    const { world, pending } = await crashed();
    const s = await settleIntents(pending, undefined, "t", reading(world));
    const { p } = await planFor(STACK, s.state, world);
    expect(p.resource_changes.map((c) => [c.address, c.change.action, c.after_adopted])).toEqual([
      ["a", "no-op", undefined],
      ["b", "no-op", undefined],
    ]);
  });

  it("a policy that cannot be read leaves the settlement undone: an error, nothing decided", async () => {
    const { pending } = await crashed();
    const port: CloudPort = {
      ...reading({}),
      getIamPolicy: async () => Promise.reject(Object.assign(new Error("denied"), { status: "PERMISSION_DENIED" })),
    };
    await expect(settleIntents(pending, newState(), "t", port)).rejects.toThrow(
      /cannot settle the writes an interrupted run left pending/,
    );
  });
});
