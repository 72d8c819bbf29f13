// The drivers' observe and outputs answer once per policy what they answered per resource (a
// policy's bindings indexed once, the project of the last name remembered): the new definitions
// against the old ones (./reference/plan-hot-path-before.ts) on seeded random policies, the same
// policy asked again and again, changed in between, and malformed.
import { describe, expect, it } from "vitest";
import { RESOURCE_TOKENS, resourceDriver } from "../../src/drivers/registry.js";
import type { IamDriver, IamInputs } from "../../src/drivers/types.js";
import type { Policy } from "../../src/generated/schemas.js";
import { seededRandom } from "../support/seeded-random.js";
import { rpName } from "../fixtures/builders.js";
import * as before from "./reference/plan-hot-path-before.js";
import { NAMES, binding, inputs, outcome, pick, policy, some } from "./reference/random-iam.js";

describe("observe and outputs, new against old", () => {
  it("the binding and member drivers' observe (bindings found once per policy)", () => {
    const r = seededRandom(22);
    const drivers = RESOURCE_TOKENS.map((t) => resourceDriver(t)!).filter((d) => d.ownership !== "policy");
    for (let n = 0; n < 3000; n++) {
      const p = policy(r);
      // The same policy is asked for many resources (its index is made once), and after it changes.
      for (let k = 0; k < 8; k++) {
        if (k === 5 && p.bindings) p.bindings.push(binding(r));
        if (k === 6 && r() < 0.5) p.bindings = some(r, 4, () => binding(r));
        const d = pick(r, drivers);
        const i = inputs(r, d);
        expect(outcome(() => d.observe(i, p))).toEqual(
          outcome(() => before.iamObserve(d.ownership === "binding", i, p)),
        );
      }
    }
  });

  it("observe throws where it threw: a binding entry that is not an object", () => {
    const d = resourceDriver("cloudnative:backup/v1:RestorePlanIamBinding")!;
    const i = { name: rpName("a"), role: "roles/b", members: ["user:a@x.com"] };
    const cases = [
      { version: 1, bindings: [{ role: "roles/b", members: ["user:a@x.com"] }, null] },
      { version: 1, bindings: [null, { role: "roles/b", members: ["user:a@x.com"] }] },
      {
        version: 1,
        bindings: [{ role: "roles/a", members: [] }, undefined, { role: "roles/b", members: ["user:b@x.com"] }],
      },
      { version: 1, bindings: "roles/b" },
      { version: 1, bindings: { length: 1, 0: { role: "roles/b", members: ["user:a@x.com"] } } },
    ] as unknown as Policy[];
    for (const p of cases) {
      expect(outcome(() => d.observe(i, p))).toEqual(outcome(() => before.iamObserve(true, i, p)));
    }
  });

  it("outputs: the project of each name, names repeated or not", () => {
    const r = seededRandom(23);
    for (const d of RESOURCE_TOKENS.map((t) => resourceDriver(t)!)) {
      for (let n = 0; n < 500; n++) {
        const i = { ...inputs(r, d), name: pick(r, [...NAMES, NAMES[0]!, NAMES[0]!]) } as IamInputs;
        expect((d.outputs(i, "e") as { project: unknown }).project).toBe(projectByParse(d, i.name));
      }
    }
  });
});

function projectByParse(d: IamDriver, name: unknown): string {
  return typeof name === "string" &&
    name.split("/").length === 6 &&
    name.split("/")[4] === (d.kind === "endpoint" ? "endpoints" : "restorePlans") &&
    name.startsWith("projects/")
    ? name.split("/")[1]!
    : "";
}
