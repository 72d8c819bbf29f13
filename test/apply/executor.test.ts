// Unit tests for src/apply/executor.ts with a fake CloudPort of plain functions (recording every
// modifyPolicy call) and a fake save. Plans come from the real planner over an in-memory world,
// so the executor is exercised on the plans it really receives.
import { describe, expect, it } from "vitest";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { EngineEvent } from "../../src/contracts/events.js";
import type { Policy, State } from "../../src/generated/schemas.js";
import { EP, MEMBER, RP, bindingState, epName, makeState, memberState, rpName } from "../fixtures/builders.js";
import {
  HEAD,
  addresses,
  binding,
  deniedOn,
  dependsOn,
  empty,
  member,
  newState,
  planFor,
  recordingCloud,
  rejecting,
  run,
} from "./harness.js";

const RP2 = rpName("weekly");
const RP3 = rpName("monthly");
const EP2 = epName("scorer");

/** a, b (dependsOn a), c (dependsOn b): one viewer binding on each of RP, RP2 and RP3. */
const CHAIN =
  HEAD +
  binding("a", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]) +
  binding("b", "weekly", "roles/gkebackup.viewer", ["user:b@example.com"], dependsOn("a")) +
  binding("c", "monthly", "roles/gkebackup.viewer", ["user:c@example.com"], dependsOn("b"));

/** CHAIN once applied: live policies and the state recording them (new objects each call: tests mutate them). */
function appliedChain(): { world: Record<string, Policy>; prior: State } {
  const world: Record<string, Policy> = {
    [RP]: { version: 1, bindings: [{ role: "roles/gkebackup.viewer", members: ["user:a@example.com"] }], etag: "rp-0" },
    [RP2]: {
      version: 1,
      bindings: [{ role: "roles/gkebackup.viewer", members: ["user:b@example.com"] }],
      etag: "rp2-0",
    },
    [RP3]: {
      version: 1,
      bindings: [{ role: "roles/gkebackup.viewer", members: ["user:c@example.com"] }],
      etag: "rp3-0",
    },
  };
  const prior = makeState("t", [
    bindingState("a", { name: RP, role: "roles/gkebackup.viewer", members: ["user:a@example.com"] }, "rp-0"),
    bindingState("b", { name: RP2, role: "roles/gkebackup.viewer", members: ["user:b@example.com"] }, "rp2-0", ["a"]),
    bindingState("c", { name: RP3, role: "roles/gkebackup.viewer", members: ["user:c@example.com"] }, "rp3-0", ["b"]),
  ]);
  return { world, prior };
}

describe("executor: merging", () => {
  it(
    "merges ready changes on the same policy into one modifyPolicy " + "call, starting from the policy plan read",
    async () => {
      const world = { [RP]: empty("rp-0"), [EP]: empty("ep-0") };
      const text =
        HEAD +
        binding("v", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]) +
        binding("adm", "nightly", "roles/gkebackup.admin", ["user:b@example.com"]) +
        binding("ops", "nightly", "roles/gkebackup.backupAdmin", ["group:ops@example.com"]) +
        member("m1", "churn", "roles/aiplatform.user", "user:c@example.com") +
        member("m2", "churn", "roles/aiplatform.user", "user:d@example.com");
      const { p, live } = await planFor(text, undefined, world);
      const cloud = recordingCloud(world);
      const { result } = await run(p, cloud.port, newState(), { live });

      expect(result.failed).toEqual([]);
      expect(result.counts.added).toBe(5);
      expect(cloud.calls).toHaveLength(2);
      const rpCall = cloud.calls.find((c) => c.name === RP)!;
      expect(rpCall.kind).toBe("restorePlan");
      expect(rpCall.mods.map((m) => `${m.kind} ${"role" in m ? m.role : ""}`).sort()).toEqual([
        "setBinding roles/gkebackup.admin",
        "setBinding roles/gkebackup.backupAdmin",
        "setBinding roles/gkebackup.viewer",
      ]);
      expect(rpCall.initial?.etag).toBe("rp-0");
      const epCall = cloud.calls.find((c) => c.name === EP)!;
      expect(epCall.kind).toBe("endpoint");
      expect(epCall.mods).toHaveLength(2);
      expect(epCall.mods.every((m) => m.kind === "addMember")).toBe(true);
      expect(epCall.initial?.etag).toBe("ep-0");
      expect(cloud.reads).toEqual([]); // apply itself read nothing: plan already had the policies
      expect(addresses(result.state)).toEqual(["adm", "m1", "m2", "ops", "v"]);
      // Each resource records the etag of the write that made it.
      expect(result.state.resources.find((r) => r.address === "v")?.outputs.etag).toBe(cloud.world[RP]!.etag);
    },
  );

  it("a batch rejected as INVALID_ARGUMENT is retried change by change, so only the bad one fails", async () => {
    const world = { [RP]: empty("rp-0") };
    const text =
      HEAD +
      binding("good", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]) +
      binding("bad", "nightly", "roles/gkebackup.admin", ["user:rejected@example.com"]);
    const { p, live } = await planFor(text, undefined, world);
    const cloud = recordingCloud(world, { fail: rejecting("user:rejected@example.com") });
    const { result } = await run(p, cloud.port, newState(), { live });
    expect(result.failed.map((f) => f.address)).toEqual(["bad"]);
    expect(addresses(result.state)).toEqual(["good"]);
    expect(cloud.calls.map((c) => c.mods.length)).toEqual([2, 1, 1]);
  });
});

describe("executor: failures", () => {
  it("a failed policy skips only its dependents; everything else applies and is saved", async () => {
    const world = { [RP]: empty("rp-0"), [RP2]: empty("rp2-0"), [EP]: empty("ep-0") };
    const text =
      HEAD +
      binding("a", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]) +
      member("b", "churn", "roles/aiplatform.user", "user:b@example.com", dependsOn("a")) +
      member("b2", "churn", "roles/aiplatform.viewer", "user:b2@example.com", dependsOn("b")) +
      binding("c", "weekly", "roles/gkebackup.viewer", ["user:c@example.com"]) +
      member("d", "churn", "roles/aiplatform.user", "user:d@example.com");
    const { p, live } = await planFor(text, undefined, world);
    const cloud = recordingCloud(world, { fail: deniedOn(RP) });
    const { result, saves } = await run(p, cloud.port, newState(), { live });

    expect(result.failed.map((f) => f.address)).toEqual(["a"]);
    expect(result.failed[0]!.diagnostic.summary).toContain("a");
    expect([...result.skipped].sort()).toEqual(["b", "b2"]);
    expect(addresses(result.state)).toEqual(["c", "d"]);
    // The endpoint was written once, with d's member only.
    const epCalls = cloud.calls.filter((c) => c.name === EP);
    expect(epCalls).toHaveLength(1);
    expect(epCalls[0]!.mods).toEqual([
      { kind: "addMember", role: "roles/aiplatform.user", member: "user:d@example.com" },
    ]);
    expect(addresses(saves.at(-1)!)).toEqual(["c", "d"]);
  });
});

describe("executor: interrupts", () => {
  it("an abort while a call is in flight lets it finish, stops scheduling and still saves", async () => {
    const world = { [RP]: empty("rp-0"), [RP2]: empty("rp2-0"), [RP3]: empty("rp3-0") };
    const { p, live } = await planFor(CHAIN, undefined, world);
    const controller = new AbortController();
    const cloud = recordingCloud(world, { during: (c) => c.name === RP && controller.abort() });
    const { result, saves } = await run(p, cloud.port, newState(), { live, signal: controller.signal });

    expect(result.interrupted).toBe(true);
    expect(cloud.calls.map((c) => c.name)).toEqual([RP]);
    expect(cloud.events).toEqual([`start ${RP}`, `end ${RP}`]); // the in-flight call finished
    expect([...result.skipped].sort()).toEqual(["b", "c"]);
    expect(addresses(result.state)).toEqual(["a"]);
    expect(saves.length).toBeGreaterThan(0);
    expect(addresses(saves.at(-1)!)).toEqual(["a"]);
  });

  it("an already aborted signal schedules nothing and writes no state (nothing changed)", async () => {
    const world = { [RP]: empty("rp-0") };
    const { p, live } = await planFor(
      HEAD + binding("a", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]),
      undefined,
      world,
    );
    const controller = new AbortController();
    controller.abort();
    const cloud = recordingCloud(world);
    const { result, saves } = await run(p, cloud.port, newState(), { live, signal: controller.signal });
    expect(result.interrupted).toBe(true);
    expect(cloud.calls).toEqual([]);
    expect(result.skipped).toEqual(["a"]);
    // A state write with nothing new would push the real previous version out of .backup.
    expect(saves).toHaveLength(0);
    expect(result.state.resources).toEqual([]);
  });
});

describe("executor: Ctrl-C drops queued work", () => {
  // Six bindings on six policies, no dependencies: all are ready at once and wait for a slot.
  const names = ["p0", "p1", "p2", "p3", "p4", "p5"].map((id) => rpName(id));
  const SIX =
    HEAD +
    names.map((_, i) => binding(`b${i}`, `p${i}`, "roles/gkebackup.viewer", [`user:u${i}@example.com`])).join("");
  const world6 = () => Object.fromEntries(names.map((n, i) => [n, empty(`e${i}`)]));
  const interruptedSteps = (events: EngineEvent[]) =>
    events
      .filter((e) => e.type === "step" && e.phase === "interrupted")
      .map((e) => (e as { address: string }).address)
      .sort();

  it("writes queued behind the parallelism limit do not start after an abort", async () => {
    const world = world6();
    const { p, live } = await planFor(SIX, undefined, world);
    const controller = new AbortController();
    const cloud = recordingCloud(world, { during: (c) => c.name === names[0] && controller.abort() });
    const events: EngineEvent[] = [];
    const { result, saves } = await run(p, cloud.port, newState(), {
      live,
      signal: controller.signal,
      parallelism: 1,
      emit: (e) => events.push(e),
    });

    expect(result.interrupted).toBe(true);
    expect(cloud.calls.map((c) => c.name)).toEqual([names[0]]);
    expect(result.failed).toEqual([]);
    expect([...result.skipped].sort()).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(interruptedSteps(events)).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(addresses(saves.at(-1)!)).toEqual(["b0"]);
  });

  it("a write the cloud refuses to send after the abort leaves its resource not done, not failed", async () => {
    const world = world6();
    const { p, live } = await planFor(SIX, undefined, world);
    const controller = new AbortController();
    const signals: (AbortSignal | undefined)[] = [];
    const port = recordingCloud(world, {
      // Both calls are under way when the abort comes; b1's, in the middle of its
      // read-modify-write, sends no write after it.
      during: (c) => c.name === names[1] && controller.abort(),
      fail: (name) =>
        name === names[1] && controller.signal.aborted
          ? Object.assign(new Error("interrupted: not sent"), { status: "CANCELLED" })
          : undefined,
    }).port;
    const cloud: CloudPort = {
      ...port,
      modifyPolicy: (kind, name, mods, initial, signal) => (
        signals.push(signal),
        port.modifyPolicy(kind, name, mods, initial, signal)
      ),
    };
    const events: EngineEvent[] = [];
    const { result, saves } = await run(p, cloud, newState(), {
      live,
      signal: controller.signal,
      parallelism: 2,
      emit: (e) => events.push(e),
    });

    expect(signals).toEqual([controller.signal, controller.signal]);
    expect(result.failed).toEqual([]);
    expect([...result.skipped].sort()).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(interruptedSteps(events)).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(events.some((e) => e.type === "policy-write" && e.policy === names[1] && e.phase === "interrupted")).toBe(
      true,
    );
    expect(addresses(saves.at(-1)!)).toEqual(["b0"]);
  });
});

describe("executor: ordering", () => {
  it("deletes run after the deletes of what depends on them (reverse dependency order)", async () => {
    // b depends on a, c depends on b; each on its own policy. Destroy: c, then b, then a.
    const { world, prior } = appliedChain();
    const { p, live } = await planFor(CHAIN, prior, world, true);
    expect(p.resource_changes.map((c) => c.change.action)).toEqual(["delete", "delete", "delete"]);
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, prior, { live });
    expect(result.failed).toEqual([]);
    expect(result.counts.destroyed).toBe(3);
    expect(cloud.events).toEqual([
      `start ${RP3}`,
      `end ${RP3}`,
      `start ${RP2}`,
      `end ${RP2}`,
      `start ${RP}`,
      `end ${RP}`,
    ]);
    expect(cloud.calls.every((c) => c.mods.every((m) => m.kind === "removeBinding"))).toBe(true);
    expect(result.state.resources).toEqual([]);
  });

  it("a failed delete skips every delete that must wait for it, transitively", async () => {
    // Destroy order is c, b, a. c's delete fails: b and a (which must go after b) are skipped.
    const { world, prior } = appliedChain();
    const { p, live } = await planFor(CHAIN, prior, world, true);
    const cloud = recordingCloud(world, { fail: deniedOn(RP3) });
    const { result } = await run(p, cloud.port, prior, { live });
    expect(result.failed.map((f) => f.address)).toEqual(["c"]);
    expect(cloud.calls.map((c) => c.name)).toEqual([RP3]);
    expect([...result.skipped].sort()).toEqual(["a", "b"]);
    expect(addresses(result.state)).toEqual(["a", "b", "c"]);
  });

  it("a replacement across two objects grants on the new one before revoking on the old one", async () => {
    const world: Record<string, Policy> = {
      [RP]: {
        version: 1,
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:a@example.com"] }],
        etag: "rp-0",
      },
      [RP2]: empty("rp2-0"),
    };
    const prior = makeState("t", [
      bindingState("v", { name: RP, role: "roles/gkebackup.viewer", members: ["user:a@example.com"] }, "rp-0"),
    ]);
    const { p, live } = await planFor(
      HEAD + binding("v", "weekly", "roles/gkebackup.viewer", ["user:a@example.com"]),
      prior,
      world,
    );
    expect(p.resource_changes.find((c) => c.address === "v")?.change.action).toEqual("replace");
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, prior, { live });

    expect(result.failed).toEqual([]);
    expect(cloud.events).toEqual([`start ${RP2}`, `end ${RP2}`, `start ${RP}`, `end ${RP}`]);
    expect(cloud.calls[0]!.mods).toEqual([
      { kind: "setBinding", role: "roles/gkebackup.viewer", members: ["user:a@example.com"] },
    ]);
    expect(cloud.calls[1]!.mods).toEqual([{ kind: "removeBinding", role: "roles/gkebackup.viewer" }]);
    expect(result.counts).toMatchObject({ added: 1, destroyed: 1 });
    expect(result.state.resources.map((r) => r.inputs.name)).toEqual([RP2]);
  });

  it(
    "a grant moved to a new address is not revoked by the old " + "address's delete when that delete has to wait",
    async () => {
      // State: m1 owns user:x on the endpoint; y (on a restore plan) depends on m1. The stack now
      // has m2 owning the same member (m1 renamed) and no y. The delete of m1 must wait for y's
      // delete; the create of m2 is ready at once. However they are ordered, the apply must end
      // with the grant present, because m2 (recorded in the state) owns it.
      const world: Record<string, Policy> = {
        [EP]: {
          version: 1,
          bindings: [{ role: "roles/aiplatform.user", members: ["user:x@example.com"] }],
          etag: "e-0",
        },
        [RP]: {
          version: 1,
          bindings: [{ role: "roles/gkebackup.viewer", members: ["user:y@example.com"] }],
          etag: "r-0",
        },
      };
      const prior = makeState("t", [
        memberState("m1", { name: EP, role: "roles/aiplatform.user", member: "user:x@example.com" }, "e-0"),
        bindingState("y", { name: RP, role: "roles/gkebackup.viewer", members: ["user:y@example.com"] }, "r-0", ["m1"]),
      ]);
      const { p, live } = await planFor(
        HEAD + member("m2", "churn", "roles/aiplatform.user", "user:x@example.com"),
        prior,
        world,
      );
      const cloud = recordingCloud(world);
      const { result } = await run(p, cloud.port, prior, { live });
      expect(result.failed).toEqual([]);
      expect(addresses(result.state)).toEqual(["m2"]);
      expect(cloud.world[EP]!.bindings?.find((b) => b.role === "roles/aiplatform.user")?.members ?? []).toContain(
        "user:x@example.com",
      );
    },
  );

  it("a replacement on one object is one write that ends with the new grant present", async () => {
    // Changing a member resource's member replaces it; on the same policy the revoke and the
    // grant go in one round.
    const world: Record<string, Policy> = {
      [EP2]: {
        version: 1,
        bindings: [{ role: "roles/aiplatform.user", members: ["user:old@example.com", "user:keep@example.com"] }],
        etag: "e-0",
      },
    };
    const prior = makeState("t", [
      {
        address: "m",
        type: MEMBER,
        id: `${EP2} roles/aiplatform.user user:old@example.com`,
        inputs: { name: EP2, role: "roles/aiplatform.user", member: "user:old@example.com" },
        outputs: {
          name: EP2,
          role: "roles/aiplatform.user",
          member: "user:old@example.com",
          etag: "e-0",
          id: `${EP2} roles/aiplatform.user user:old@example.com`,
          project: "my-project",
        },
        dependencies: [],
      },
    ]);
    const { p, live } = await planFor(
      HEAD + member("m", "scorer", "roles/aiplatform.user", "user:new@example.com"),
      prior,
      world,
    );
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, prior, { live });
    expect(result.failed).toEqual([]);
    expect(cloud.calls).toHaveLength(1);
    expect(cloud.world[EP2]!.bindings).toEqual([
      { role: "roles/aiplatform.user", members: ["user:keep@example.com", "user:new@example.com"] },
    ]);
  });
});

describe("executor: state saves", () => {
  it("saves after steps complete, bumping the serial each time; the result carries the last serial", async () => {
    const world = { [RP]: empty("rp-0"), [RP2]: empty("rp2-0"), [RP3]: empty("rp3-0") };
    const { p, live } = await planFor(CHAIN, undefined, world);
    const prior = { ...newState(), serial: 7 };
    const cloud = recordingCloud(world);
    const { result, saves } = await run(p, cloud.port, prior, { live });

    expect(result.failed).toEqual([]);
    expect(saves.length).toBeGreaterThanOrEqual(2);
    expect(saves.map((s) => s.serial)).toEqual(saves.map((_, i) => 8 + i));
    // The first save happens as soon as the first step is done, before the rest ran.
    expect(addresses(saves[0]!)).toEqual(["a"]);
    expect(addresses(saves.at(-1)!)).toEqual(["a", "b", "c"]);
    expect(result.state.serial).toBe(saves.at(-1)!.serial);
    expect(saves.every((s) => s.lineage === prior.lineage)).toBe(true);
    // Saved resources never go backwards.
    for (let i = 1; i < saves.length; i++)
      expect(saves[i]!.resources.length).toBeGreaterThanOrEqual(saves[i - 1]!.resources.length);
  });
});
