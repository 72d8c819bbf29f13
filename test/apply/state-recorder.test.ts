// The recorder keeps each resource once, as its sealed copy: the saves must hold exactly what a
// plain copy of the state serialises to, and recording an equal resource again saves nothing.
import { describe, expect, it } from "vitest";
import { StateRecorder } from "../../src/apply/state-recorder.js";
import type { State, StateResource } from "../../src/generated/schemas.js";
import { newState, serializeState } from "../../src/state/index.js";

function res(address: string, inputs: Record<string, unknown>, dependencies: string[] = []): StateResource {
  // Keys out of schema order, as the executor's records are not sorted.
  return {
    outputs: { etag: `e-${address}` },
    inputs,
    dependencies,
    type: "cloudnative:backup/v1:RestorePlanIamBinding",
    id: `id-${address}`,
    address,
  };
}

function recorder(initial: State): { rec: StateRecorder; saved: string[] } {
  const saved: string[] = [];
  let serial = initial.serial;
  const rec = new StateRecorder(
    initial,
    async (s) => {
      saved.push(serializeState(s));
      return { ...s, serial: ++serial };
    },
    () => {},
  );
  return { rec, saved };
}

/** What a save of the recorder's state must hold: its plain deep copy, serialised. */
function expected(rec: StateRecorder, serial: number): string {
  return serializeState({ ...JSON.parse(JSON.stringify(rec.state)), serial } as State);
}

describe("state recorder", () => {
  it("saves what a plain copy of its state serialises to, through sets, renames, removals and outputs", async () => {
    const prior: State = {
      ...newState("dev"),
      serial: 3,
      resources: [res("a", { z: 1, role: "r" }), res("b", { members: ["m2", "m1"] }, ["a"])],
    };
    const { rec, saved } = recorder(prior);
    rec.warm();
    rec.set(res("c", { role: "x", member: "user:c" }, ["b"]));
    await rec.save();
    expect(saved.at(-1)).toBe(expected(rec, 3));
    rec.renameAll(new Map([["a", "a2"]]));
    rec.set(res("b", { members: ["m3"] }, ["a2"]));
    rec.remove("c", "cloudnative:backup/v1:RestorePlanIamBinding");
    rec.setOutputs({ o: { y: 1, b: [2] } });
    await rec.flush();
    expect(saved.at(-1)).toBe(expected(rec, 4));
    expect(rec.state.resources.map((r) => r.address)).toEqual(["a2", "b"]);
    // The prior state given to the recorder is not changed.
    expect(prior.resources.map((r) => r.address)).toEqual(["a", "b"]);
    expect(Object.isFrozen(prior.resources[0])).toBe(false);
  });

  it("keeps the sealed copy in its state, and an equal resource recorded again is no change", async () => {
    const { rec, saved } = recorder(newState("dev"));
    rec.set(res("a", { role: "r", b: { y: 1, x: 2 } }));
    await rec.save();
    expect(saved).toHaveLength(1);
    expect(Object.isFrozen(rec.state.resources[0])).toBe(true);
    rec.set(res("a", { b: { x: 2, y: 1 }, role: "r" }));
    await rec.flush();
    expect(saved).toHaveLength(1);
    rec.set(res("a", { role: "other" }));
    await rec.flush();
    expect(saved).toHaveLength(2);
    expect(saved[1]).toBe(expected(rec, 1));
  });
});

// A destroy of 100,000 resources copied the state's list at each removal (10^10 steps: it had
// destroyed 64,000 of them after ten minutes).
describe("state recorder at 100,000 resources", () => {
  const T = "cloudnative:backup/v1:RestorePlanIamBinding";

  it("removes them one by one in linear time, sets and removals interleaved keeping their order", async () => {
    const n = 100_000;
    const prior: State = {
      ...newState("dev"),
      serial: 1,
      resources: Array.from({ length: n }, (_, i) => res(`r${i}`, { role: "r" })),
    };
    const { rec, saved } = recorder(prior);
    for (let i = 0; i < n - 2; i++) {
      rec.remove(`r${i}`, T);
      if (i % 10_000 === 0) rec.set(res(`new${i}`, { role: "n" }));
      if (i === 50_000) rec.set(res("r99999", { role: "changed" }));
    }
    rec.remove("r99998", "another:type");
    rec.remove("absent", T);
    const left = ["r99998", "r99999", ...Array.from({ length: 10 }, (_, k) => `new${k * 10_000}`)];
    expect(rec.state.resources.map((r) => r.address)).toEqual(left);
    expect(rec.state.resources[1]!.inputs).toEqual({ role: "changed" });
    await rec.flush();
    expect(saved.at(-1)).toBe(expected(rec, 1));
    rec.remove("new0", T);
    rec.set(res("new0", { role: "again" }));
    expect(rec.state.resources.map((r) => r.address)).toEqual([...left.filter((a) => a !== "new0"), "new0"]);
  });

  it("renames 100,000 of them at once (moved:), their dependencies too", () => {
    const n = 100_000;
    const prior: State = {
      ...newState("dev"),
      serial: 1,
      resources: Array.from({ length: n }, (_, i) => res(`r${i}`, { role: "r" }, i ? [`r${i - 1}`] : [])),
    };
    const { rec } = recorder(prior);
    const renames = new Map<string, string>(Array.from({ length: n - 1 }, (_, i) => [`r${i}`, `s${i}`]));
    renames.set("absent", "x");
    renames.set(`r${n - 1}`, "s0");
    rec.renameAll(renames);
    expect(rec.state.resources[1]).toMatchObject({ address: "s1", dependencies: ["s0"] });
    expect(rec.state.resources.at(-1)).toMatchObject({ address: `r${n - 1}`, dependencies: [`s${n - 2}`] });
  });

  it("makes the renames as one after another would: a chain composes, a taken or missing address is skipped", () => {
    const prior: State = {
      ...newState("dev"),
      serial: 1,
      resources: [res("a", {}), res("x", {}, ["a"]), res("k", {}, ["x", "a"])],
    };
    const { rec } = recorder(prior);
    // a → b → c; then x takes the freed a; k → c is skipped (c is taken); m does not exist.
    rec.renameAll(
      new Map([
        ["a", "b"],
        ["b", "c"],
        ["x", "a"],
        ["k", "c"],
        ["m", "n"],
      ]),
    );
    expect(rec.state.resources.map((r) => [r.address, r.dependencies])).toEqual([
      ["c", []],
      ["a", ["c"]],
      ["k", ["a", "c"]],
    ]);
  });
});
