// The emulator is the oracle of the end-to-end tests, so it must not reach its verdicts with the
// client's code: nothing it loads, directly or through another module, may come from the client's
// IAM rules, cloud client, configuration, drivers or planner. Shared code is neutral naming
// (src/gcp/), schemas and generated types.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importSpecifiers, reachableEdges, ROOT, SRC } from "../scripts/imports.js";

const FORBIDDEN = ["iam", "cloud", "config", "drivers", "plan"].map((d) => join(SRC, d) + "/");

const forbidden = (file: string): boolean => FORBIDDEN.some((dir) => file.startsWith(dir));

const emulatorFiles = (): string[] =>
  readdirSync(join(SRC, "emulator"))
    .filter((f) => /\.tsx?$/.test(f))
    .map((f) => join(SRC, "emulator", f));

describe("the emulator's independence from the client", () => {
  it("finds the imports it scans (the scanner is not blind)", () => {
    const specs = importSpecifiers(
      'import a from "./a.js";\nexport { b } from "../b.js";\nimport type { C } from ' +
        '"../c.js";\nimport "./side.js";\nawait import("./lazy.js");',
    );
    expect(specs.sort()).toEqual(["../b.js", "../c.js", "./a.js", "./lazy.js", "./side.js"]);
    // The client's own modules do import what the emulator must not: the scan would see it.
    const client = reachableEdges([join(SRC, "cloud", "policy-engine.ts")]);
    expect(client.some(([, to]) => to.startsWith(join(SRC, "iam") + "/"))).toBe(true);
  });

  it("loads nothing from src/iam, src/cloud, src/config, src/drivers or src/plan, even indirectly", () => {
    const edges = reachableEdges(emulatorFiles());
    // It does follow imports out of src/emulator/ (into src/gcp/, src/schemas/, …).
    expect(edges.some(([, to]) => !to.startsWith(join(SRC, "emulator") + "/"))).toBe(true);
    const offending = edges
      .filter(([from, to]) => forbidden(to) && !forbidden(from))
      .map(([from, to]) => `${relative(ROOT, from)} → ${relative(ROOT, to)}`);
    expect(offending).toEqual([]);
  });
});
