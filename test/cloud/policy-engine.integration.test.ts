// The policy engine and batcher against the real emulator: contention, faults, preservation.
import { describe, expect, it } from "vitest";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import type { CloudEvent } from "../../src/cloud/cloud-events.js";
import type { Policy } from "../../src/generated/schemas.js";
import {
  AUDIT,
  EP,
  ROLE,
  RP,
  RP2,
  UNTIL_2027,
  emulatorClient,
  setFaults,
  stats,
  useResetEmulator,
  worldOf,
} from "./emulator-helpers.js";
import { GET_RP, SET_RP } from "../support/emulator.js";

const emu = useResetEmulator();

async function serverPolicy(kind: "restorePlans" | "endpoints", name: string): Promise<Policy> {
  const w = await worldOf(emu.url);
  const o = (w[kind] ?? []).find((x) => x.name === name);
  if (!o) throw new Error(`${name} not in the emulator's world`);
  return o.policy ?? {};
}

describe("modifyPolicy against the emulator", () => {
  it("20 concurrent writers to the same role all land, through real ABORTED conflicts", async () => {
    const before = await stats(emu.url);
    const events: CloudEvent[] = [];
    const c = emulatorClient(emu.hostPort, { onEvent: (e) => events.push(e) });
    const members = Array.from({ length: 20 }, (_, i) => `user:writer-${String(i).padStart(2, "0")}@example.com`);
    const results = await Promise.all(
      members.map((member) => modifyPolicy(c, "restorePlan", RP2, [{ kind: "addMember", role: ROLE, member }])),
    );
    expect(results.every((r) => r.written)).toBe(true);

    const live = await c.getIamPolicy("restorePlan", RP2);
    const binding = live.bindings!.find((b) => b.role === ROLE && !b.condition)!;
    expect([...binding.members].sort()).toEqual(members);

    const after = await stats(emu.url);
    const aborted = (after.responses[SET_RP]?.ABORTED ?? 0) - (before.responses[SET_RP]?.ABORTED ?? 0);
    const okSets = (after.responses[SET_RP]?.OK ?? 0) - (before.responses[SET_RP]?.OK ?? 0);
    expect(aborted).toBeGreaterThan(0);
    expect(okSets).toBe(20);
    // The engine's own accounting matches the server's.
    expect(results.reduce((n, r) => n + r.writes, 0)).toBe(aborted + okSets);
    expect(results.reduce((n, r) => n + r.reads, 0)).toBe(
      (after.requests[GET_RP] ?? 0) - (before.requests[GET_RP] ?? 0) - 1,
    );
    expect(events.filter((e) => e.type === "policy" && e.outcome === "aborted")).toHaveLength(aborted);
  });

  it(
    "a binding modification leaves other roles, other conditional " + "bindings of the role and auditConfigs untouched",
    async () => {
      const c = emulatorClient(emu.hostPort);
      const original = await serverPolicy("restorePlans", RP);
      const r = await modifyPolicy(c, "restorePlan", RP, [
        { kind: "setBinding", role: ROLE, members: ["user:alice@example.com", "group:ops@example.com"] },
      ]);
      expect(r.written).toBe(true);
      const live = await serverPolicy("restorePlans", RP);
      expect(live.version).toBe(3);
      expect(live.auditConfigs).toEqual(AUDIT);
      expect(live.auditConfigs).toEqual(original.auditConfigs);
      expect(live.bindings).toContainEqual({ role: "roles/owner", members: ["user:owner@example.com"] });
      expect(live.bindings).toContainEqual({ role: ROLE, members: ["group:sre@example.com"], condition: UNTIL_2027 });
      const plain = live.bindings!.filter((b) => b.role === ROLE && !b.condition);
      expect(plain).toHaveLength(1);
      expect([...plain[0]!.members].sort()).toEqual(["group:ops@example.com", "user:alice@example.com"]);
      expect(live.bindings).toHaveLength(3);

      // Removing the conditional binding removes only it.
      await modifyPolicy(c, "restorePlan", RP, [{ kind: "removeBinding", role: ROLE, condition: UNTIL_2027 }]);
      const after = await serverPolicy("restorePlans", RP);
      expect(after.bindings).toHaveLength(2);
      expect(after.bindings!.some((b) => b.condition)).toBe(false);
      expect(after.auditConfigs).toEqual(AUDIT);
    },
  );

  it("endpoint: a member edit is case-insensitive and preserves the rest", async () => {
    const c = emulatorClient(emu.hostPort);
    const sa = "serviceAccount:Runner@My-Project.iam.gserviceaccount.com";
    const unchanged = await modifyPolicy(c, "endpoint", EP, [
      { kind: "addMember", role: "roles/aiplatform.user", member: sa },
    ]);
    expect(unchanged).toMatchObject({ written: false, writes: 0 });
    await modifyPolicy(c, "endpoint", EP, [
      { kind: "addMember", role: "roles/aiplatform.user", member: "user:eve@example.com" },
    ]);
    await modifyPolicy(c, "endpoint", EP, [
      {
        kind: "removeMember",
        role: "roles/aiplatform.user",
        member: sa.toUpperCase().replace("SERVICEACCOUNT:", "serviceAccount:"),
      },
    ]);
    const live = await serverPolicy("endpoints", EP);
    expect(live.bindings).toContainEqual({ role: "roles/aiplatform.user", members: ["user:eve@example.com"] });
    expect(live.bindings).toContainEqual({
      role: "roles/aiplatform.viewer",
      members: ["user:dana@example.com"],
      condition: UNTIL_2027,
    });
    expect(live.auditConfigs).toBeUndefined();
  });

  it("read-modify-write still succeeds with 30% UNAVAILABLE injected", async () => {
    await setFaults(emu.url, { errorRates: { UNAVAILABLE: 0.3 }, seed: 7 });
    const c = emulatorClient(emu.hostPort, { retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const members = Array.from({ length: 10 }, (_, i) => `user:flaky-${i}@example.com`);
    await Promise.all(
      members.map((member) =>
        modifyPolicy(c, "restorePlan", RP2, [{ kind: "addMember", role: ROLE, member }], { baseDelayMs: 5 }),
      ),
    );
    await setFaults(emu.url, {});
    const live = await serverPolicy("restorePlans", RP2);
    expect([...live.bindings![0]!.members].sort()).toEqual([...members].sort());
  });
});
