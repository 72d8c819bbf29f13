// The benchmark's generated stacks (bench/generate.ts): N resources, every IAM type in the mix, a
// stack that loads without diagnostics, and a shape whose counts the bench checks its runs against.
import { describe, expect, it } from "vitest";
import { seedYaml, shapeOf, stackYaml } from "../../bench/generate.js";
import { parseStack } from "../../src/config/load.js";
import { RESOURCE_TOKENS } from "../../src/drivers/registry.js";

describe("bench stacks", () => {
  it.each([100, 200, 1000])("N=%i: N resources over P policies, every type present, loads cleanly", (n) => {
    const shape = shapeOf(n);
    expect(shape.objects.reduce((a, o) => a + o.resources, 0)).toBe(n);
    expect(shape.p).toBe(shape.objects.length);
    expect(shape.p).toBe(n / 10 + 2 * Math.floor(n / 100));
    expect(shape.restorePlans + shape.endpoints).toBe(shape.p);
    expect(shape.changedReplaced + shape.changedUpdated).toBe(shape.changedPolicies);
    for (const changed of [false, true]) {
      const r = parseStack("/virtual/bench.yaml", stackYaml(shape, changed));
      expect(r.diagnostics).toEqual([]);
      const resources = [...r.stack!.resources.values()];
      expect(resources).toHaveLength(n);
      expect(new Set(resources.map((d) => d.type))).toEqual(new Set(RESOURCE_TOKENS));
      // Every policy is the object of some resource.
      expect(
        new Set(resources.map((d) => d.driver.policyName(d.driver.normalize(d.properties, r.stack!.provider).inputs)))
          .size,
      ).toBe(shape.p);
    }
    expect(seedYaml(shape).match(/^ {2}- name: /gm)).toHaveLength(shape.p);
  });

  it("the changed variant changes one resource of every policy", () => {
    const shape = shapeOf(100);
    const before = parseStack("/v/a.yaml", stackYaml(shape, false)).stack!;
    const after = parseStack("/v/b.yaml", stackYaml(shape, true)).stack!;
    const key = (d: { properties: unknown }) => JSON.stringify(d.properties);
    const changedByPolicy = new Map<string, number>();
    for (const [name, d] of after.resources) {
      if (before.resources.has(name) && key(before.resources.get(name)!) === key(d)) continue;
      const policy = String(d.properties.name);
      changedByPolicy.set(policy, (changedByPolicy.get(policy) ?? 0) + 1);
    }
    expect(changedByPolicy.size).toBe(shape.p);
    expect([...changedByPolicy.values()].every((c) => c === 1)).toBe(true);
  });
});
