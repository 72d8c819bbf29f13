// The benchmark's per-resource baseline (bench/per-resource/port.mjs): a CloudPort wrapper that
// turns the engine's batched calls into one call per resource.
import { describe, expect, it } from "vitest";
import { perResourceChunks, perResourcePort } from "../../bench/per-resource/port.mjs";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import type { PolicyModification } from "../../src/iam/policy.js";

function recording() {
  const calls: string[] = [];
  const inner: CloudPort = {
    getIamPolicy: async (_k, name) => (calls.push(`get ${name}`), { version: 1, bindings: [], etag: "e" }),
    getFederation: async () => {
      throw new Error("unused");
    },
    modifyPolicy: async (_k, name, mods, initial) => (
      calls.push(`modify ${name} ${mods.map((m) => m.kind).join("+")}${initial ? " from-initial" : ""}`),
      { policy: { version: 1, bindings: [], etag: "e2" }, written: true, attempts: 1 }
    ),
  };
  return { inner, calls };
}

const add = (role: string, member: string): PolicyModification => ({ kind: "addMember", role, member });
const remove = (role: string, member: string): PolicyModification => ({ kind: "removeMember", role, member });

describe("per-resource baseline port", () => {
  it("refresh: one read per state resource on the policy, none when it holds none", async () => {
    const { inner, calls } = recording();
    const port = perResourcePort(inner, new Map([["p", 3]]));
    expect(await port.getIamPolicy("endpoint", "p")).toMatchObject({ etag: "e" });
    expect(await port.getIamPolicy("endpoint", "q")).toEqual({ version: 1, bindings: [], etag: "" });
    expect(calls).toEqual(["get p", "get p", "get p"]);
  });

  it("apply: one read-modify-write per resource, one after the other, never from the plan's policy", async () => {
    const { inner, calls } = recording();
    const port = perResourcePort(inner, new Map());
    const out = await port.modifyPolicy(
      "endpoint",
      "p",
      [add("r1", "user:a"), remove("r2", "user:old"), add("r2", "user:new"), remove("r3", "user:x")],
      { version: 1, bindings: [], etag: "plan" },
    );
    expect(calls).toEqual(["modify p addMember", "modify p removeMember+addMember", "modify p removeMember"]);
    expect(out).toMatchObject({ attempts: 3, written: true });
  });

  it("a revoke is paired with the grant after it only on the same role (a replacement on one object)", () => {
    expect(perResourceChunks([remove("r1", "user:a"), add("r2", "user:b")]).map((c) => c.length)).toEqual([1, 1]);
  });
});
