// The policy-size check at load names each resource's object with completeName (issue 20: it used
// to run the driver's whole normalize on placeholder inputs for it). Both must agree on every name.
import { describe, expect, it } from "vitest";
import { completeName } from "../../src/cloud/names.js";
import { RESOURCE_TOKENS, resourceDriver } from "../../src/drivers/registry.js";

const NAMES = [
  "a",
  "loc/a",
  "l/a/b",
  "",
  "-a",
  "a b",
  "projects/p/locations/l/restorePlans/a",
  "projects/p/locations/l/endpoints/a",
  "projects/p/locations/l/restorePlans/",
  "projects//locations/l/restorePlans/a",
  "projects/p/locations/l/restorePlans/a/b",
  "projects/p/regions/l/endpoints/a",
  "p/l/a",
  "a.b_c-d",
  "A9",
  "é",
  "__proto__",
];
const DEFAULTS = [{ project: "p", location: "l" }, { project: "p" }, { location: "l" }, {}];

/** What the policy-size check used before: the driver's normalize on placeholder inputs. */
function oldObject(token: string, name: string, defaults: { project?: string; location?: string }): string | undefined {
  const n = resourceDriver(token)!.normalize({ role: "roles/x", members: [], member: "user:x@x.x", name }, defaults);
  return n.problems.length === 0 && n.inputs.name.startsWith("projects/") ? n.inputs.name : undefined;
}

describe("the object a resource's literal name designates", () => {
  it("is what the drivers' normalize makes of the name, for every resource type", () => {
    for (const token of RESOURCE_TOKENS) {
      for (const name of NAMES) {
        for (const defaults of DEFAULTS) {
          const named = completeName(resourceDriver(token)!.kind, name, defaults);
          expect(
            typeof named === "string" ? undefined : named.full,
            `${token} ${name} ${JSON.stringify(defaults)}`,
          ).toBe(oldObject(token, name, defaults));
        }
      }
    }
  });
});
