// projectOf remembers parseFullName's project per (kind, name): the same answer every time.
import { describe, expect, it } from "vitest";
import { parseFullName } from "../../src/cloud/names.js";
import { projectOf } from "../../src/cloud/names.js";

describe("projectOf", () => {
  it("is parseFullName's project ('' when not a full name of that kind), asked again and again", () => {
    const cases: [Parameters<typeof projectOf>[0], string][] = [
      ["restorePlan", "projects/p1/locations/us-central1/restorePlans/rp-1"],
      ["endpoint", "projects/p1/locations/us-central1/restorePlans/rp-1"],
      ["endpoint", "projects/p2/locations/europe-west1/endpoints/e-9"],
      ["restorePlan", "projects/p2/locations/europe-west1/endpoints/e-9"],
      ["restorePlan", "rp-1"],
      ["endpoint", ""],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [kind, name] of cases) expect(projectOf(kind, name)).toBe(parseFullName(kind, name)?.project ?? "");
    }
    expect(projectOf("restorePlan", "projects/p1/locations/us-central1/restorePlans/rp-1")).toBe("p1");
    expect(projectOf("endpoint", "projects/p1/locations/us-central1/restorePlans/rp-1")).toBe("");
  });
});

describe("completeNameOnce", () => {
  it("is completeName's answer, whatever order kinds, names and provider defaults come in", async () => {
    const { completeName } = await import("../../src/cloud/names.js");
    const { completeNameOnce } = await import("../../src/cloud/names.js");
    const names = [
      "a",
      "l/a",
      "x y",
      "projects/p/locations/l/restorePlans/a",
      "projects/p/locations/l/endpoints/a",
      "",
      "a/b/c",
      "restorePlan a",
    ];
    const defaults = [
      { project: "p", location: "l" },
      { project: "p", location: "m" },
      { project: "q", location: "l" },
      { project: "p" },
      {},
      { project: "", location: "" },
    ];
    for (let round = 0; round < 2; round++) {
      for (const d of [...defaults, ...defaults.reverse()]) {
        for (const kind of ["restorePlan", "endpoint"] as const) {
          for (const name of names)
            expect(completeNameOnce(kind, name, d), `${kind} ${name} ${JSON.stringify(d)}`).toEqual(
              completeName(kind, name, d),
            );
        }
      }
    }
  });
});
