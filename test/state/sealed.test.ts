// Sealed resources (sealedCopy) are a cache: a state holding them serialises, checks and parses
// exactly as the same state with plain resources does (apply's saves rely on it).
import { describe, expect, it } from "vitest";
import type { State, StateResource } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import {
  hasSealedResources,
  parsedState,
  sealedCopy,
  serializeState,
  serializeStateBytes,
  stateProblems,
} from "../../src/state/format.js";
import { newState } from "../../src/state/index.js";
import { resource } from "./helpers.js";

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ["b", "a", "role", "members", "10", "2", "__proto__", "é", "z z", "toJSON", "", "condition"];

function randomValue(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth > 3 || pick < 0.3) {
    const scalars = [0, -0, 1.5, 1e21, "x", "line\nbreak", "\u2028", "é\u0000", true, false, null, undefined];
    return scalars[Math.floor(r() * scalars.length)];
  }
  if (pick < 0.55) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 5); i > 0; i--)
    Object.defineProperty(o, KEYS[Math.floor(r() * KEYS.length)]!, {
      value: randomValue(r, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return o;
}

function randomResource(r: () => number, i: number): StateResource {
  const extra: Record<string, unknown> = {};
  if (r() < 0.3) extra.protect = true;
  if (r() < 0.2) extra.sensitive = { "inputs.member": true };
  if (r() < 0.1) extra.adopted = true;
  // Keys in another order than the schema's, values of every kind.
  return {
    outputs: randomValue(r, 1) ?? {},
    dependencies: r() < 0.5 ? [] : ["a", `r${i}`],
    ...extra,
    inputs: randomValue(r, 1) ?? {},
    id: `id-${i}`,
    type: "cloudnative:backup/v1:RestorePlanIamBinding",
    address: `r${i}`,
  } as unknown as StateResource;
}

function withResources(resources: StateResource[]): State {
  return {
    ...newState("dev"),
    lineage: "00000000-0000-4000-8000-000000000000",
    serial: 4,
    resources,
    outputs: { z: 1, a: [1, { y: 2, b: 3 }] },
  };
}

/** serializeState as it was defined before it reused objects already in order: always a copy. */
function referenceText(state: State): string {
  const first = (top: boolean, level: number) => (level === 0 ? STATE_KEYS : top && level === 2 ? RESOURCE_KEYS : []);
  const copy = (v: unknown, level: number, inResources: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => copy(x, level + 1, inResources));
    const proto = v !== null && typeof v === "object" ? (Object.getPrototypeOf(v) as unknown) : undefined;
    if (proto !== Object.prototype && proto !== null) return v;
    const obj = v as Record<string, unknown>;
    const keys = first(inResources, level);
    const out: Record<string, unknown> = Object.create(null);
    for (const k of keys)
      if (Object.hasOwn(obj, k)) out[k] = copy(obj[k], level + 1, level === 0 ? k === "resources" : inResources);
    for (const k of Object.keys(obj).sort())
      if (!keys.includes(k)) out[k] = copy(obj[k], level + 1, level === 0 ? k === "resources" : inResources);
    return out;
  };
  return JSON.stringify(copy(state, 0, false), null, 2) + "\n";
}
const STATE_KEYS = ["version", "lineage", "serial", "stack", "resources", "outputs", "sensitive_outputs"];
const RESOURCE_KEYS = ["address", "type", "id", "inputs", "outputs", "dependencies", "protect", "sensitive"];

/**
 * Values JSON.stringify treats specially: holes, NaN, own toJSON, non-enumerable keys, getters, null prototypes, class
 * instances.
 */
function oddValue(r: () => number): unknown {
  const arrayWithToJSON = Object.assign([1, 2], { toJSON: () => "array toJSON" });
  const hidden = Object.defineProperty({ a: 1 }, "b", { value: 2, enumerable: false });
  const hiddenToJSON = Object.defineProperty({ a: 1 }, "toJSON", { value: () => "hidden toJSON", enumerable: false });
  const getter = Object.defineProperty({}, "g", { get: () => ({ y: 1, x: 2 }), enumerable: true });
  const nullProto = Object.assign(Object.create(null) as object, { b: 1, a: { d: 1, c: 2 } });
  const odd = [
    // eslint-disable-next-line no-sparse-arrays
    [1, , 3],
    NaN,
    [NaN, { b: NaN, a: 1 }],
    arrayWithToJSON,
    hidden,
    hiddenToJSON,
    getter,
    nullProto,
    new Date(0),
    { 2: "x", 1: "y", b: "z", a: "w" },
    { a: undefined, b: 1 },
    [undefined, () => 1],
  ];
  return odd[Math.floor(r() * odd.length)];
}

describe("state text", () => {
  it("is what the copying definition gave, for random states and odd values", () => {
    const r = rng(7);
    for (let round = 0; round < 200; round++) {
      const resources = Array.from({ length: Math.floor(r() * 4) }, (_, i) => randomResource(r, i));
      if (resources.length && r() < 0.5)
        resources[0] = { ...resources[0]!, inputs: { odd: oddValue(r), keep: resources[0]!.inputs } };
      const outputs = r() < 0.5 ? { z: oddValue(r), a: randomValue(r, 1) } : { a: 1, b: [1, 2] };
      const state = { ...withResources(resources), outputs } as State;
      expect(serializeState(state)).toBe(referenceText(state));
      // With a sealed resource, each other resource is written on its own (resourceText).
      const mixed = { ...state, resources: [sealedCopy(resource("sealed")), ...resources] };
      expect(serializeState(mixed)).toBe(referenceText(mixed));
    }
  });
});

describe("sealed state resources", () => {
  it("serialise, check and parse as the plain resources do (random resources, some sealed)", () => {
    const r = rng(20);
    for (let round = 0; round < 60; round++) {
      const plain = Array.from({ length: 1 + Math.floor(r() * 6) }, (_, i) => randomResource(r, i));
      const state = withResources(plain);
      const text = serializeState(state);
      const mixed = withResources(plain.map((x) => (r() < 0.6 ? sealedCopy(x) : x)));
      expect(serializeState(mixed)).toBe(text);
      // The bytes a store writes, in pieces (each sealed resource's encoded once): the same text.
      expect(Buffer.concat(serializeStateBytes(mixed)).toString("utf8")).toBe(text);
      expect(Buffer.concat(serializeStateBytes(state)).toString("utf8")).toBe(text);
      expect(Buffer.concat(serializeStateBytes(mixed)).toString("utf8")).toBe(text);
      expect(stateProblems(mixed)).toEqual(validate("state.schema.json", JSON.parse(text)));
      expect(stateProblems(state)).toEqual(validate("state.schema.json", JSON.parse(text)));
      expect(parsedState(mixed)).toStrictEqual(JSON.parse(text));
      // Twice: the cached text and check give the same again.
      expect(serializeState(mixed)).toBe(text);
      expect(stateProblems(mixed)).toEqual(validate("state.schema.json", JSON.parse(text)));
    }
  });

  it("write the same bytes as their text across many encoded pieces, large ones and non-ASCII ones", () => {
    const big = "é€😀".repeat(20_000); // 180 KB of UTF-8 in one resource
    const resources = Array.from({ length: 3000 }, (_, i) =>
      sealedCopy(
        resource(`r${i}`, {
          inputs: {
            role: "r",
            member: `user:ü${"x".repeat(i % 900)}@example.com`,
            note: i === 1500 ? big : "",
          } as never,
        }),
      ),
    );
    const state = withResources(resources);
    const text = serializeState(state);
    expect(Buffer.concat(serializeStateBytes(state)).toString("utf8")).toBe(text);
    // The second time from the cached bytes, with resources replaced as apply does.
    resources[7] = sealedCopy(resource("r7", { inputs: { role: "other" } as never }));
    expect(Buffer.concat(serializeStateBytes(state)).toString("utf8")).toBe(serializeState(state));
  });

  it("a sealed copy is the resource as read back from its text, deeply frozen, and its own copy", () => {
    const x = resource("a", {
      inputs: { role: "r", member: "m", extra: undefined, list: [{ b: 1, a: 2 }] } as never,
      protect: true,
    });
    const sealed = sealedCopy(x);
    const back = (JSON.parse(serializeState(withResources([x]))) as State).resources[0];
    expect(sealed).toStrictEqual(back);
    expect(Object.isFrozen(sealed)).toBe(true);
    expect(Object.isFrozen((sealed.inputs as { list: object[] }).list[0])).toBe(true);
    expect(sealedCopy(sealed)).toBe(sealed);
    expect(Object.isFrozen(x)).toBe(false); // the original is left as it was
    expect(hasSealedResources(withResources([x]))).toBe(false);
    expect(hasSealedResources(withResources([x, sealed]))).toBe(true);
  });

  it("an invalid sealed resource gives the errors of the whole state, also the second time", () => {
    const bad = sealedCopy({ ...resource("a"), id: 7 } as unknown as StateResource);
    const state = withResources([resource("ok"), bad]);
    const expected = validate("state.schema.json", JSON.parse(serializeState(state)));
    expect(expected.length).toBeGreaterThan(0);
    expect(stateProblems(state)).toEqual(expected);
    expect(stateProblems(state)).toEqual(expected);
  });
});
