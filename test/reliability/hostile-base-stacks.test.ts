// The hostile-input fuzzer's starting stacks (hostile-stack-cases.ts) are valid: each loads,
// plans without an error against fuzzWorld() and applies, so that what the fuzzer's mutations
// break is the mutation's doing. The family stack covers issue 16's types and functions.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { baseStacks, fuzzWorld, mutateStack, renderStack } from "./hostile-stack-cases.js";
import { runStackCase } from "./hostile-stack-run.js";
import { tempDir } from "./helpers.js";

describe("the fuzzer's starting stacks", () => {
  it.each(baseStacks().map((s) => [s.name, s] as const))("%s loads, plans cleanly and applies", async (_name, spec) => {
    const { dir, remove } = await tempDir("converge-base-stacks-");
    try {
      const o = await runStackCase(join(dir, "stack.yaml"), Buffer.from(renderStack(spec)), fuzzWorld());
      expect(o).toMatchObject({ kind: "clean", applied: true, unpositioned: [], escapes: [] });
      expect(o.writes).toBeGreaterThan(0);
    } finally {
      await remove();
    }
  });

  it("the family stack has every IAM type and both policy functions", () => {
    const family = baseStacks().find((s) => s.name === "family")!;
    const text = renderStack(family);
    for (const t of [
      "RestorePlanIamPolicy",
      "RestorePlanIamMember",
      "EndpointIamBinding",
      "EndpointIamPolicy",
      "getRestorePlanIamPolicy",
      "getEndpointIamPolicy",
      "auditConfigs",
    ])
      expect(text).toContain(t);
  });

  it(
    "a resource added on an object a policy resource manages is " + "refused at load, positioned, with no write",
    async () => {
      const { dir, remove } = await tempDir("converge-base-stacks-");
      try {
        for (const value of [1, 2, 3, 4]) {
          const quick = mutateStack(baseStacks()[0]!, { kind: "addEntry", section: "resources", name: "extra", value });
          const family = mutateStack(baseStacks()[2]!, {
            kind: "addEntry",
            section: "resources",
            name: "extra",
            value,
          });
          // The family stack's weekly member has another role: an added member there is no conflict.
          for (const spec of value === 3 ? [quick] : [quick, family]) {
            const o = await runStackCase(join(dir, "stack.yaml"), Buffer.from(renderStack(spec)), fuzzWorld());
            expect(o.kind, renderStack(spec)).not.toBe("clean");
            expect(o).toMatchObject({ writes: 0, unpositioned: [], escapes: [] });
          }
        }
      } finally {
        await remove();
      }
    },
  );
});
