// Issue 15, item 6: the change graph contracted into a policy graph (src/apply/policy-graph.ts).
// Without a cycle every changed policy is written once, after the policies it depends on; with a
// cycle only what must wait for the cycle goes in a later write; a failure skips only what
// depends on it. A fake CloudPort of plain functions records every write.
import { describe, expect, it } from "vitest";
import type { Policy } from "../../src/generated/schemas.js";
import type { PolicyModification } from "../../src/iam/policy.js";
import { EP, RP, bindingState, makeState, rpName } from "../fixtures/builders.js";
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
const VIEWER = "roles/gkebackup.viewer";
const USER = "roles/aiplatform.user";
const writesOn = (calls: { name: string }[], name: string) => calls.filter((c) => c.name === name).length;
/** On the endpoint: `after` waits for the binding on the restore plan, `free` for nothing. */
const AFTER_AND_FREE =
  HEAD +
  binding("viewers", "nightly", VIEWER, ["user:bob@example.com"]) +
  member("after", "churn", USER, "user:dana@example.com", dependsOn("viewers")) +
  member("free", "churn", "roles/aiplatform.viewer", "user:erin@example.com");
const membersOfMods = (mods: PolicyModification[]) =>
  mods.map((m) => ("member" in m ? m.member : "members" in m ? m.members.join(",") : m.kind)).sort();

describe("one write per policy", () => {
  it(
    "a member waiting for a binding on another policy shares its " + "endpoint's one write with the independent member",
    async () => {
      const world = { [RP]: empty("rp-0"), [EP]: empty("ep-0") };
      const { p, live } = await planFor(AFTER_AND_FREE, undefined, world);
      const cloud = recordingCloud(world);
      const { result } = await run(p, cloud.port, newState(), { live });
      expect(result.failed).toEqual([]);
      expect(cloud.calls.map((c) => c.name)).toEqual([RP, EP]);
      expect(membersOfMods(cloud.calls[1]!.mods)).toEqual(["user:dana@example.com", "user:erin@example.com"]);
      expect(addresses(result.state)).toEqual(["after", "free", "viewers"]);
    },
  );

  it("a chain through three policies and back to none: each policy written once, in dependency order", async () => {
    // EP waits for RP, which waits for RP2; e2 and n2 wait for nothing.
    const world = { [RP]: empty("rp-0"), [RP2]: empty("rp2-0"), [EP]: empty("ep-0") };
    const text =
      HEAD +
      binding("w", "weekly", VIEWER, ["user:w@example.com"]) +
      binding("n", "nightly", VIEWER, ["user:n@example.com"], dependsOn("w")) +
      binding("n2", "nightly", "roles/gkebackup.admin", ["user:n2@example.com"]) +
      member("e", "churn", USER, "user:e@example.com", dependsOn("n")) +
      member("e2", "churn", USER, "user:e2@example.com");
    const { p, live } = await planFor(text, undefined, world);
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, newState(), { live });
    expect(result.failed).toEqual([]);
    expect(cloud.events).toEqual([
      `start ${RP2}`,
      `end ${RP2}`,
      `start ${RP}`,
      `end ${RP}`,
      `start ${EP}`,
      `end ${EP}`,
    ]);
  });

  it("a dependency between two changes of one policy is kept by the single write that carries both", async () => {
    const world = { [RP]: empty("rp-0") };
    const text =
      HEAD +
      binding("a", "nightly", VIEWER, ["user:a@example.com"]) +
      binding("b", "nightly", "roles/gkebackup.admin", ["user:b@example.com"], dependsOn("a")) +
      binding("c", "nightly", "roles/gkebackup.backupAdmin", ["user:c@example.com"]);
    const { p, live } = await planFor(text, undefined, world);
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, newState(), { live });
    expect(result.failed).toEqual([]);
    expect(cloud.calls).toHaveLength(1);
    expect(cloud.calls[0]!.mods).toHaveLength(3);
  });

  it(
    "a replacement across two objects: the old object's write " + "(with its other changes) follows the new one's",
    async () => {
      const world: Record<string, Policy> = {
        [RP]: { version: 1, bindings: [{ role: VIEWER, members: ["user:a@example.com"] }], etag: "rp-0" },
        [RP2]: empty("rp2-0"),
      };
      const prior = makeState("t", [
        bindingState("v", { name: RP, role: VIEWER, members: ["user:a@example.com"] }, "rp-0"),
      ]);
      const text =
        HEAD +
        binding("v", "weekly", VIEWER, ["user:a@example.com"]) +
        binding("x", "nightly", "roles/gkebackup.admin", ["user:x@example.com"]) +
        binding("y", "weekly", "roles/gkebackup.admin", ["user:y@example.com"]);
      const { p, live } = await planFor(text, prior, world);
      const cloud = recordingCloud(world);
      const { result } = await run(p, cloud.port, prior, { live });
      expect(result.failed).toEqual([]);
      expect(cloud.calls.map((c) => [c.name, c.mods.map((m) => m.kind).sort()])).toEqual([
        [RP2, ["setBinding", "setBinding"]],
        [RP, ["removeBinding", "setBinding"]],
      ]);
      expect(cloud.world[RP]!.bindings).toEqual([{ role: "roles/gkebackup.admin", members: ["user:x@example.com"] }]);
    },
  );
});

describe("a cycle in the policy graph", () => {
  // p1 (EP) waits for q1 (RP); q2 (RP) waits for p2 (EP): EP -> RP -> EP. p3 and q3 wait for nothing.
  const CYCLE =
    HEAD +
    binding("q1", "nightly", VIEWER, ["user:q1@example.com"]) +
    member("p1", "churn", USER, "user:p1@example.com", dependsOn("q1")) +
    member("p2", "churn", "roles/aiplatform.viewer", "user:p2@example.com") +
    binding("q2", "nightly", "roles/gkebackup.admin", ["user:q2@example.com"], dependsOn("p2")) +
    member("p3", "churn", "roles/aiplatform.admin", "user:p3@example.com") +
    binding("q3", "nightly", "roles/gkebackup.backupAdmin", ["user:q3@example.com"]);

  it("splits only the changes that wait for the cycle into a second write; the others share the first", async () => {
    const world = { [RP]: empty("rp-0"), [EP]: empty("ep-0") };
    const { p, live } = await planFor(CYCLE, undefined, world);
    const cloud = recordingCloud(world);
    const { result } = await run(p, cloud.port, newState(), { live });
    expect(result.failed).toEqual([]);
    expect(writesOn(cloud.calls, EP)).toBe(2);
    expect(writesOn(cloud.calls, RP)).toBe(2);
    const [first, second] = [EP, RP].map((n) => cloud.calls.filter((c) => c.name === n));
    expect(membersOfMods(first![0]!.mods)).toEqual(["user:p2@example.com", "user:p3@example.com"]);
    expect(membersOfMods(first![1]!.mods)).toEqual(["user:p1@example.com"]);
    expect(membersOfMods(second![0]!.mods)).toEqual(["user:q1@example.com", "user:q3@example.com"]);
    expect(membersOfMods(second![1]!.mods)).toEqual(["user:q2@example.com"]);
    // Each dependent write comes after the one it waits for.
    const at = (name: string, i: number) =>
      cloud.events.indexOf(`start ${name}`, i === 0 ? 0 : cloud.events.indexOf(`start ${name}`) + 1);
    const ends = (name: string) => cloud.events.indexOf(`end ${name}`);
    expect(at(EP, 1)).toBeGreaterThan(ends(RP));
    expect(at(RP, 1)).toBeGreaterThan(ends(EP));
    expect(addresses(result.state)).toEqual(["p1", "p2", "p3", "q1", "q2", "q3"]);
  });
});

describe("failures with one write per policy", () => {
  it(
    "a refused policy skips only the change waiting for it; the rest " + "of the other policy is still written once",
    async () => {
      const world = { [RP]: empty("rp-0"), [EP]: empty("ep-0") };
      const { p, live } = await planFor(AFTER_AND_FREE, undefined, world);
      const cloud = recordingCloud(world, { fail: deniedOn(RP) });
      const { result } = await run(p, cloud.port, newState(), { live });
      expect(result.failed.map((f) => f.address)).toEqual(["viewers"]);
      expect(result.skipped).toEqual(["after"]);
      expect(cloud.calls.map((c) => c.name)).toEqual([RP, EP]);
      expect(membersOfMods(cloud.calls[1]!.mods)).toEqual(["user:erin@example.com"]);
      expect(addresses(result.state)).toEqual(["free"]);
    },
  );

  it(
    "a change rejected in a shared write fails alone; the change " + "sharing the write that depends on it is skipped",
    async () => {
      const world = { [RP]: empty("rp-0") };
      const text =
        HEAD +
        binding("bad", "nightly", VIEWER, ["user:rejected@example.com"]) +
        binding("b", "nightly", "roles/gkebackup.admin", ["user:b@example.com"], dependsOn("bad")) +
        binding("c", "nightly", "roles/gkebackup.backupAdmin", ["user:c@example.com"]);
      const { p, live } = await planFor(text, undefined, world);
      const cloud = recordingCloud(world, { fail: rejecting("user:rejected@example.com") });
      const { result } = await run(p, cloud.port, newState(), { live });
      expect(result.failed.map((f) => f.address)).toEqual(["bad"]);
      expect(result.skipped).toEqual(["b"]);
      expect(addresses(result.state)).toEqual(["c"]);
      expect(cloud.calls.map((c) => c.mods.length)).toEqual([3, 1, 1]);
    },
  );
});
