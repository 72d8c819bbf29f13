// certainlyValidState must never accept what ajv's state.schema.json validator refuses (a state
// it accepts skips ajv on read), and accepts every state ajv finds valid (else the read is no
// cheaper): the same verdict on seeded random mutations of states, awkward values included.
import { describe, expect, it } from "vitest";
import { validate } from "../../src/schemas/index.js";
import { certainlyValidState } from "../../src/state/state-check.js";
import { parseState } from "../../src/state/format.js";
import { seededRandom } from "../support/seeded-random.js";

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const AWKWARD: unknown[] = [undefined, null, true, false, 0, -0, 1, 2, 1.5, -1, 9007199254740991, 9007199254740992, Infinity, -Infinity, NaN, "", "x", "\ud83d", "\ud83d\ude00", [], ["a"], [1], {}, { a: 1 }, [null], Object.create(null)];
const STATE_KEYS = ["version", "lineage", "serial", "stack", "resources", "outputs", "sensitive_outputs", "__proto__", "extra"];
const RESOURCE_KEYS = ["address", "type", "id", "inputs", "outputs", "dependencies", "protect", "sensitive", "adopted", "__proto__", "extra"];

function resource(r: Rand, k: number): Record<string, unknown> {
  const out: Record<string, unknown> = { address: `r${k}`, type: "cloudnative:backup/v1:RestorePlanIamBinding", id: "i", inputs: { name: "n" }, outputs: { etag: "e" }, dependencies: r() < 0.5 ? [] : ["a", "b"] };
  if (r() < 0.3) out.protect = r() < 0.5;
  if (r() < 0.3) out.adopted = r() < 0.5;
  if (r() < 0.3) out.sensitive = r() < 0.8 ? { members: true } : {};
  return out;
}

function state(r: Rand): Record<string, unknown> {
  const out: Record<string, unknown> = { version: 1, lineage: "l-1", serial: pick(r, [0, 3, 9007199254740991]), stack: "s", resources: Array.from({ length: Math.floor(r() * 4) }, (_, k) => resource(r, k)), outputs: r() < 0.5 ? {} : { o: [1] } };
  if (r() < 0.3) out.sensitive_outputs = r() < 0.5 ? [] : ["o"];
  return out;
}

/** One change somewhere: a key set to an awkward value, deleted, or added. */
function mutate(r: Rand, target: Record<string, unknown>, keys: readonly string[]): void {
  const k = pick(r, keys);
  const how = r();
  if (how < 0.2) delete target[k];
  else if (k === "__proto__") Object.defineProperty(target, k, { value: pick(r, AWKWARD), enumerable: true, writable: true, configurable: true });
  else target[k] = pick(r, AWKWARD);
}

function mutated(r: Rand): unknown {
  const s = state(r);
  const resources = s.resources as Record<string, unknown>[];
  for (let n = Math.floor(r() * 3); n > 0; n--) {
    const where = r();
    if (where < 0.4) mutate(r, s, STATE_KEYS);
    else if (resources.length && where < 0.8) mutate(r, pick(r, resources), RESOURCE_KEYS);
    else if (resources.length && where < 0.9) (pick(r, resources).sensitive = { a: pick(r, AWKWARD) });
    else if (resources.length) (pick(r, resources).dependencies as unknown) = [pick(r, AWKWARD)];
  }
  return r() < 0.05 ? pick(r, AWKWARD) : r() < 0.05 ? [s] : s;
}

describe("certainlyValidState", () => {
  it("is ajv's verdict on random states and mutations of them", () => {
    const r = seededRandom(31);
    let valid = 0;
    for (let n = 0; n < 20000; n++) {
      const v = mutated(r);
      const ajvValid = validate("state.schema.json", v).length === 0;
      expect(certainlyValidState(v)).toBe(ajvValid);
      if (ajvValid) valid++;
    }
    expect(valid).toBeGreaterThan(3000);
    expect(valid).toBeLessThan(17000);
  });

  it("is ajv's verdict on states read from text (a __proto__ key is an own key)", () => {
    for (const text of [
      '{"version":1,"lineage":"l","serial":0,"stack":"s","resources":[],"outputs":{}}',
      '{"version":1,"lineage":"l","serial":0,"stack":"s","resources":[],"outputs":{},"__proto__":{}}',
      '{"version":1,"lineage":"l","serial":0,"stack":"s","resources":[{"address":"a","type":"t","id":"i","inputs":{},"outputs":{},"dependencies":[],"__proto__":1}],"outputs":{}}',
      '{"version":1,"lineage":"l","serial":0,"stack":"s","resources":[{"address":"a","type":"t","id":"i","inputs":{},"outputs":{},"dependencies":[],"sensitive":{"__proto__":true}}],"outputs":{}}',
      '{"version":1.0,"lineage":"l","serial":1e3,"stack":"s","resources":[],"outputs":{}}',
      '{"version":1,"lineage":"l","serial":-0,"stack":"s","resources":[],"outputs":{}}',
      '{"version":1,"lineage":"l","serial":1e400,"stack":"s","resources":[],"outputs":{}}',
    ]) {
      const v = JSON.parse(text) as unknown;
      expect(certainlyValidState(v)).toBe(validate("state.schema.json", v).length === 0);
    }
  });

  it("leaves the diagnostics of a state it does not accept to ajv, as before", () => {
    const text = '{"version":1,"lineage":"","serial":-1,"stack":3,"resources":[{"address":1}],"outputs":[]}';
    expect(() => parseState(text, "/x/state.json")).toThrow(/is not a valid converge state: /);
    let message = "";
    try {
      parseState(text, "/x/state.json");
    } catch (e) {
      message = (e as Error).message;
    }
    for (const part of ["lineage", "serial", "stack", "address", "outputs"]) expect(message).toContain(part);
  });
});
