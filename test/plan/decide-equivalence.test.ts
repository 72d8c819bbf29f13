// A resource's decision made with fewer objects and closures (no filter closures, no spread copy
// of the no-op change, a no-op's value itself as its before and after) must be the decision it
// was: the new definitions against the old ones (./reference/plan-hot-path-before.ts) on many
// seeded random and awkward inputs.
import { describe, expect, it } from "vitest";
import { RESOURCE_TOKENS, resourceDriver } from "../../src/drivers/registry.js";
import type { StateResource } from "../../src/generated/schemas.js";
import { changedFields, sameInputs } from "../../src/plan/compare.js";
import { decideExisting, type ExistingInput } from "../../src/plan/decide.js";
import type { Observed } from "../../src/plan/refresh.js";
import { type ChangeBase, change, noOpChange } from "../../src/plan/change-builders.js";
import { UNKNOWN } from "../../src/language/expressions.js";
import { seededRandom } from "../support/seeded-random.js";
import * as before from "./reference/plan-hot-path-before.js";
import { type Rand, inputs, known, outcome, pick, shape, some } from "./reference/random-iam.js";

function existingInput(r: Rand): ExistingInput {
  const d = resourceDriver(pick(r, RESOURCE_TOKENS))!;
  const prior = known(inputs(r, d), r);
  const state: StateResource = {
    address: "r",
    type: d.token,
    id: "i",
    inputs: prior as unknown as Record<string, unknown>,
    outputs: { etag: "e" },
    dependencies: ["x"],
  };
  if (r() < 0.3) state.protect = r() < 0.5;
  if (r() < 0.3) state.adopted = r() < 0.5;
  const seen = r() < 0.7 ? (r() < 0.6 ? prior : known(inputs(r, d), r)) : undefined;
  const etag = pick(r, ["e", "f"]);
  const outputs = seen && r() < 0.8 && typeof seen.name === "string" ? d.outputs(seen, etag) : undefined;
  const observed: Observed = seen
    ? outputs
      ? { inputs: seen, etag, outputs }
      : { inputs: seen, etag }
    : r() < 0.5
      ? { inputs: undefined, etag: "", missing: true }
      : { inputs: undefined, etag };
  const base: ChangeBase = { address: "r", mode: "managed", type: d.token, name: "r", dependencies: [] };
  if (r() < 0.3) base.protect = true;
  if (r() < 0.7) base.policy = String(prior.name);
  return {
    base,
    driver: d,
    desired: r() < 0.5 ? prior : inputs(r, d),
    state,
    observed,
    ignoreChanges: r() < 0.8 ? [] : some(r, 2, () => pick(r, d.inputFields)),
    replaceRequested: r() < 0.1,
    protect: r() < 0.3,
    liveHas: (x) => (JSON.stringify(shape(x))?.length ?? 0) % 2 === 0,
  };
}

describe("a resource's decision, new against old", () => {
  it("changedFields and sameInputs", () => {
    const r = seededRandom(20);
    for (let n = 0; n < 20000; n++) {
      const d = resourceDriver(pick(r, RESOURCE_TOKENS))!;
      const a = inputs(r, d);
      const b = r() < 0.3 ? a : inputs(r, d);
      expect(changedFields(d, a, b)).toEqual(before.changedFields(d, a, b));
      expect(sameInputs(d, a, b)).toBe(before.sameInputs(d, a, b));
    }
  });

  it("decideExisting: the same decision, key for key", () => {
    const r = seededRandom(21);
    const seen = new Map<string, number>();
    for (let n = 0; n < 20000; n++) {
      const i = existingInput(r);
      const got = outcome(() => decideExisting(i));
      expect(got).toEqual(outcome(() => before.decideExisting(i)));
      const kind =
        (got as unknown[])[0] === "threw"
          ? "threw"
          : (() => {
              const d = decideExisting(i);
              return d.kind === "missing"
                ? "missing"
                : `${d.change.change.action}${d.drift ? " drift" : ""}${d.change.state_only ? " protect" : ""}`;
            })();
      seen.set(kind, (seen.get(kind) ?? 0) + 1);
    }
    // Every way a decision goes was met, each many times (a no-op with drift: ~25 in 20,000).
    for (const k of [
      "no-op",
      "no-op drift",
      "no-op protect",
      "update",
      "update drift",
      "create drift",
      "replace",
      "missing",
      "threw",
    ])
      expect(seen.get(k) ?? 0).toBeGreaterThan(20);
  });

  it('noOpChange is change(base, ["no-op"], v, v) on random values, awkward ones included', () => {
    const r = seededRandom(25);
    const base: ChangeBase = { address: "r", mode: "managed", type: "t", name: "r", dependencies: [] };
    const value = (depth: number): unknown => {
      const k = r();
      if (depth > 3 || k < 0.3) return pick(r, [null, 0, -0, "", "s", true, false, undefined, UNKNOWN, () => 1]);
      if (k < 0.55) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
      if (k < 0.6) return [1, , 2]; // eslint-disable-line no-sparse-arrays
      const o: Record<string, unknown> = r() < 0.1 ? Object.create(null) : r() < 0.05 ? new Date(0) : {};
      for (let n = Math.floor(r() * 4); n > 0; n--) {
        const key = pick(r, ["a", "b", "members", "__proto__", "0", "10"]);
        Object.defineProperty(o, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return o;
    };
    for (let n = 0; n < 20000; n++) {
      const v = value(0);
      expect(outcome(() => noOpChange(base, v))).toEqual(outcome(() => change(base, "no-op", v, v)));
    }
  });
});
