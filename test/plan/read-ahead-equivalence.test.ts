// The read-ahead list and the state's resources by policy, worked out without a key per resource
// where a resource's policy is the one before's: the same as before (./reference/plan-hot-path-before.ts)
// on seeded random states (unknown types, names that are not strings, runs of one policy).
import { describe, expect, it } from "vitest";
import { RESOURCE_TOKENS } from "../../src/drivers/registry.js";
import type { State, StateResource } from "../../src/generated/schemas.js";
import { readAheadPolicies } from "../../src/plan/refresh.js";
import { stateResourcesByPolicy } from "../../src/plan/plan-configuration.js";
import { seededRandom } from "../support/seeded-random.js";
import { epName, rpName, STACK_HEAD, stackOf } from "../fixtures/builders.js";
import * as before from "./reference/plan-hot-path-before.js";
import { NAMES, pick, some } from "./reference/random-iam.js";

describe("read-ahead, new against old", () => {
  it("readAheadPolicies and stateResourcesByPolicy", () => {
    const r = seededRandom(24);
    for (let n = 0; n < 40; n++) {
      const tokens = [...RESOURCE_TOKENS, "cloudnative:unknown/v1:Nothing"];
      const stackNames = [
        pick(r, ["a", "b"]),
        ...some(r, 6, () => pick(r, ["a", "b", "c", "europe-west1/a", "full-a"])),
      ];
      const full = (k: number, s: string) => (s.startsWith("full-") ? (k % 2 ? epName : rpName)(s.slice(5)) : s);
      const stack = stackOf(
        `${STACK_HEAD}resources:\n` +
          stackNames
            .map(
              (s, k) =>
                `  s${k}:\n    type: ` +
                (k % 2
                  ? "cloudnative:aiplatform/v1beta1:EndpointIamMember"
                  : "cloudnative:backup/v1:RestorePlanIamBinding") +
                `\n    properties:\n      name: "${full(k, s)}"\n      role: roles/x${k}\n      ` +
                `${k % 2 ? "member: user:u@example.com" : "members: [user:u@example.com]"}\n`,
            )
            .join(""),
      );
      const resources: StateResource[] = [];
      for (let k = 0; k < 60; k++) {
        const last = resources[resources.length - 1];
        const type = last && r() < 0.6 ? last.type : pick(r, tokens);
        const name = last && r() < 0.7 ? last.inputs.name : pick(r, [...NAMES, 5, undefined]);
        resources.push({ address: `r${k}`, type, id: "i", inputs: { name }, outputs: {}, dependencies: [] });
      }
      const state: State = { version: 1, lineage: "l", serial: 1, stack: "t", resources, outputs: {} };
      for (const prior of [state, undefined]) {
        for (const opts of [
          { refresh: true, destroy: false },
          { refresh: true, destroy: true },
          { refresh: false, destroy: false },
        ]) {
          expect([...readAheadPolicies(stack, prior, opts)]).toEqual([...before.readAheadPolicies(stack, prior, opts)]);
        }
        expect([...stateResourcesByPolicy(prior)]).toEqual([...before.stateResourcesByPolicy(prior)]);
      }
    }
  });
});
