// Issue 12, class 3: the names every JavaScript object inherits (toString, constructor,
// __proto__, hasOwnProperty, valueOf, …) are names like any other. fast-check declares random
// sets of them as variables, resources, outputs and prior outputs, and references, dependsOn
// entries and lint rules naming absent ones, then loads and plans (fake cloud): declared ones
// keep their values, absent ones are "not found", and nothing crashes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { plan } from "../../src/plan/planner.js";
import { EP, MEMBER, STACK_HEAD, fakeCloud, makeState, planOptions, stackOf } from "../fixtures/builders.js";

/** Object.prototype's own names that are also valid stack names (all of them, today). */
const INHERITED = Object.getOwnPropertyNames(Object.prototype).filter((n) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(n));

const variableValue = (n: string) => Object.fromEntries([[n, `v-${n}`]]);
const memberOf = (n: string) => `user:${n}@example.com`;

interface Names {
  variables: string[];
  resources: string[];
  outputs: string[];
  /** Outputs in the prior state (the same value when also in the stack) */
  prior: string[];
}

/** Disjoint variables and resources, and any outputs and prior outputs, among the inherited names. */
const names: fc.Arbitrary<Names> = fc
  .record({
    roles: fc.array(fc.constantFrom("variable", "resource", "none"), {
      minLength: INHERITED.length,
      maxLength: INHERITED.length,
    }),
    outputs: fc.subarray(INHERITED),
    prior: fc.subarray(INHERITED),
  })
  .map(({ roles, outputs, prior }) => ({
    variables: INHERITED.filter((_, i) => roles[i] === "variable"),
    resources: INHERITED.filter((_, i) => roles[i] === "resource"),
    outputs,
    prior,
  }));

/** Output `o`'s expression: a field of a declared variable or resource, else a literal. */
function outputExpr(o: string, n: Names): { text: string; value: string } {
  const v = n.variables[o.length % Math.max(1, n.variables.length)];
  if (v !== undefined) return { text: `"\${${v}.${v}}"`, value: `v-${v}` };
  const r = n.resources[o.length % Math.max(1, n.resources.length)];
  if (r !== undefined) return { text: `"\${${r}.member}"`, value: memberOf(r) };
  return { text: `"out-${o}"`, value: `out-${o}` };
}

function stackText(n: Names): string {
  let text = STACK_HEAD;
  if (n.variables.length) text += "variables:\n" + n.variables.map((v) => `  ${v}:\n    ${v}: v-${v}\n`).join("");
  if (n.resources.length) {
    text += "resources:\n";
    for (const r of n.resources)
      text +=
        `  ${r}:\n    type: ${MEMBER}\n    properties: { name: churn, role: ` +
        `roles/aiplatform.user, member: "${memberOf(r)}" }\n`;
  }
  if (n.outputs.length) text += "outputs:\n" + n.outputs.map((o) => `  ${o}: ${outputExpr(o, n).text}\n`).join("");
  return text;
}

const world = () => fakeCloud({ policies: { [EP]: { version: 1, etag: "BwE=", bindings: [] } } });

describe("names every object inherits are ordinary names", () => {
  it("declared as variables, resources and outputs: they load, plan and keep their values", async () => {
    await fc.assert(
      fc.asyncProperty(names, async (n) => {
        const stack = stackOf(stackText(n));
        const priorOutputs = Object.fromEntries(
          n.prior.map((o) => [o, n.outputs.includes(o) ? outputExpr(o, n).value : `old-${o}`]),
        );
        const { plan: p, diagnostics } = await plan(
          stack,
          makeState("t", [], priorOutputs),
          world().port,
          planOptions(),
        );
        expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
        expect(Object.keys(p.variables ?? {}).sort()).toEqual([...n.variables].sort());
        for (const v of n.variables) expect(p.variables![v]).toEqual(variableValue(v));
        expect(p.resource_changes.map((c) => c.address).sort()).toEqual([...n.resources].sort());
        for (const c of p.resource_changes) expect(c.change.after).toMatchObject({ member: memberOf(c.address) });
        expect(Object.keys(p.output_changes).sort()).toEqual([...new Set([...n.outputs, ...n.prior])].sort());
        for (const o of n.outputs) {
          const c = p.output_changes[o]!;
          expect(c.after).toBe(outputExpr(o, n).value);
          expect(c.action).toEqual(n.prior.includes(o) ? "no-op" : "create");
        }
        for (const o of n.prior.filter((x) => !n.outputs.includes(x)))
          expect(p.output_changes[o]).toMatchObject({ action: "delete", before: `old-${o}` });
        // The plan goes through JSON (plan --out, plan --json) unchanged.
        expect(JSON.parse(JSON.stringify(p.output_changes))).toEqual(p.output_changes);
      }),
      { numRuns: 60 },
    );
  });

  it("absent ones are not found: references, dependsOn and lint rules naming them are errors", () => {
    fc.assert(
      fc.property(fc.constantFrom(...INHERITED), fc.constantFrom("reference", "dependsOn", "lint"), (absent, where) => {
        const resource =
          `resources:\n  grant:\n    type: ${MEMBER}\n    properties: { name: churn, role: ` +
          `roles/aiplatform.user, member: "user:ana@example.com" }\n`;
        const text =
          where === "reference"
            ? `${STACK_HEAD}${resource}outputs:\n  out: "\${${absent}}"\n`
            : where === "dependsOn"
              ? `${STACK_HEAD}${resource}    options: { dependsOn: [${absent}] }\n`
              : `${STACK_HEAD}${resource}lint:\n  ${absent}: false\n`;
        const r = parseStack("/virtual/stack.yaml", text);
        expect(r.stack).toBeUndefined();
        const want =
          where === "reference"
            ? `undefined reference "\${${absent}}"`
            : where === "dependsOn"
              ? `dependsOn names "${absent}", which is not a resource`
              : `lint: unknown rule "${absent}"`;
        expect(r.diagnostics.map((d) => d.summary)).toEqual([expect.stringContaining(want)]);
      }),
      { numRuns: 100 },
    );
  });
});
