// The loader's lint skips a resource when mayHaveFindings says no rule could find anything in it
// (no views, values or paths built). Sound only if the rules, run anyway, find nothing in every
// resource it skips: checked on many seeded stacks with public, deleted, duplicate and
// interpolated members, basic roles, conditions and empty and policy bindings.
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseStack } from "../../src/config/load.js";
import { literalFindings, mayHaveFindings, mayHaveLiteralFindings } from "../../src/config/lint.js";
import { seededRandom } from "../support/seeded-random.js";

const MEMBERS = [
  "user:a@example.com",
  "user:A@example.com",
  "USER:a@example.com",
  "user:b@example.com",
  "group:g@example.com",
  "allUsers",
  "allAuthenticatedUsers",
  "deleted:user:a@example.com?uid=1",
  "domain:example.com",
  "domain:EXAMPLE.com",
  "principal://x/y",
  "${v}",
  "${w}",
];
// A member beyond ASCII, and one whose punycode reads beyond it (lookalike-principal).
MEMBERS.push("user:\u0430@example.com", "user:a@xn--80ak6aa92e.com", "user:a@EXAMPLE.COM");
const ROLES = ["roles/x.y", "roles/viewer", "roles/owner", "roles/editor", "roles/z.a", "${r}"];
const CONDITIONS = [
  { title: "t", expression: "request.time < timestamp('2020-01-01T00:00:00Z')" },
  { title: "t2", expression: "request.time < timestamp('2099-01-01T00:00:00Z')" },
  { title: "t3", expression: "resource.name.startsWith('projects/x')" },
];
const NOW = new Date("2026-11-23T00:00:00Z");

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function members(rand: () => number): string[] {
  return Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, MEMBERS));
}

function grant(rand: () => number): Record<string, unknown> {
  const g: Record<string, unknown> = { role: pick(rand, ROLES), members: members(rand) };
  if (rand() < 0.15) g.condition = pick(rand, CONDITIONS);
  return g;
}

function resource(rand: () => number, i: number): Record<string, unknown> {
  const kind = rand();
  if (kind < 0.4)
    return { type: "cloudnative:backup/v1:RestorePlanIamBinding", properties: { name: `rp-${i}`, ...grant(rand) } };
  if (kind < 0.8) {
    const g = grant(rand);
    return {
      type: "cloudnative:backup/v1:RestorePlanIamMember",
      properties: {
        name: `rp-${i}`,
        role: g.role,
        member: pick(rand, MEMBERS),
        ...(g.condition ? { condition: g.condition } : {}),
      },
    };
  }
  return {
    type: "cloudnative:backup/v1:RestorePlanIamPolicy",
    properties: { name: `rp-${i}`, bindings: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => grant(rand)) },
  };
}

describe("lint of literal values, skipping resources no rule could find anything in", () => {
  it("skips only resources in which the rules find nothing", () => {
    const rand = seededRandom(20261123);
    let resources = 0;
    let withFindings = 0;
    let skipped = 0;
    for (let run = 0; run < 1500; run++) {
      const written: Record<string, unknown> = {};
      for (let i = 0; i < 1 + Math.floor(rand() * 4); i++) written[`r${i}`] = resource(rand, i);
      const text = stringify({
        name: "s",
        provider: { project: "p", location: "l" },
        variables: { v: "user:v@example.com", w: "allUsers", r: "roles/owner" },
        resources: written,
      });
      const loaded = parseStack("/tmp/stack.yaml", text, { now: NOW });
      if (!loaded.stack) continue;
      for (const r of loaded.stack.resources.values()) {
        resources++;
        const found = literalFindings(r, NOW);
        if (found.length > 0) withFindings++;
        if (mayHaveFindings(r.properties)) continue;
        skipped++;
        expect(found, JSON.stringify(r.properties)).toStrictEqual([]);
      }
    }
    // Not vacuous: resources with findings, and many the quick check skips.
    expect(resources).toBeGreaterThan(1500);
    expect(withFindings).toBeGreaterThan(300);
    expect(skipped).toBeGreaterThan(300);
  });

  it("says no only for values without a finding", () => {
    expect(mayHaveLiteralFindings({ role: "roles/x.y", members: ["user:a@example.com", "group:g@example.com"] })).toBe(
      false,
    );
    expect(mayHaveLiteralFindings({ role: "roles/x.y", member: "user:a@example.com" })).toBe(false);
    for (const p of [
      { role: "roles/viewer", members: ["user:a@example.com"] },
      { role: "roles/x.y", members: [] },
      { role: "roles/x.y", members: ["user:a@example.com", "user:A@example.com"] },
      { role: "roles/x.y", members: ["user:a@example.com", "group:g@example.com", "user:A@example.com"] },
      { role: "roles/x.y", members: ["user:a@example.com"], member: "user:a@EXAMPLE.com" },
      { role: "roles/x.y", member: "allUsers" },
      { role: "roles/x.y", members: ["deleted:user:a@example.com?uid=1"] },
      { role: "roles/x.y", members: ["user:a@example.com"], condition: { title: "t", expression: "true" } },
    ]) {
      expect(mayHaveLiteralFindings(p), JSON.stringify(p)).toBe(true);
    }
  });
});
