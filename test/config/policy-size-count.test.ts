// The load-time policy-size check counts each object's distinct (role, condition, member) grants
// in one set of member keys per binding (src/config/policy-size.ts); it used to keep one set of
// "binding\0member" strings per object. Both must find the same objects over the limit, with the
// same count and the same resource, on random stacks around 1,500 principals (objects that list
// at most 1,500 members in all are not counted at all).
import { describe, expect, it } from "vitest";
import type { Condition } from "../../src/generated/schemas.js";
import { completeName } from "../../src/cloud/names.js";
import type { ResourceDecl, StackModel } from "../../src/config/model.js";
import { hasInterpolation } from "../../src/language/expressions.js";
import { MAX_PRINCIPALS, stackPolicySizeErrors } from "../../src/config/policy-size.js";
import { SourceDocument } from "../../src/yaml/source.js";
import { resourceDriver } from "../../src/drivers/registry.js";
import { conditionKey } from "../../src/iam/conditions.js";
import { memberKey } from "../../src/iam/members.js";

const literal = (v: unknown): v is string => typeof v === "string" && !hasInterpolation(v);

/** The first definition: one set of "binding\0member" keys per object. */
function oldOver(stack: StackModel): { object: string; size: number; over: string }[] {
  const perObject = new Map<string, { grants: Set<string>; over?: string }>();
  const addGrants = (grants: Set<string>, b: Record<string, unknown>) => {
    let binding: string | undefined;
    const add = (m: unknown) => {
      if (!literal(m)) return;
      binding ??= JSON.stringify([
        b.role,
        b.condition && typeof b.condition === "object" ? conditionKey(b.condition as Condition) : (b.condition ?? ""),
      ]);
      grants.add(`${binding}\u0000${memberKey(m)}`);
    };
    if (Array.isArray(b.members)) for (const m of b.members) add(m);
    add(b.member);
  };
  for (const r of stack.resources.values()) {
    const name = r.properties.name;
    if (!literal(name)) continue;
    const named = completeName(r.driver.kind, name, stack.provider);
    if (typeof named === "string") continue;
    let entry = perObject.get(named.full);
    if (!entry) perObject.set(named.full, (entry = { grants: new Set() }));
    const p = r.properties;
    if (!Array.isArray(p.bindings)) addGrants(entry.grants, p);
    else
      for (const b of p.bindings)
        if (typeof b === "object" && b !== null) addGrants(entry.grants, b as Record<string, unknown>);
    if (entry.grants.size > MAX_PRINCIPALS && entry.over === undefined) entry.over = r.name;
  }
  return [...perObject]
    .filter(([, e]) => e.over !== undefined)
    .map(([object, e]) => ({ object, size: e.grants.size, over: e.over! }));
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/** A stack of binding, member and policy resources on two objects, members drawn from a pool
 *  (so some repeat, in other cases), some conditional, some interpolated. */
function randomStack(seed: number): StackModel {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)]!;
  const pool = Math.floor(1400 + r() * 1200);
  const member = () => {
    const i = Math.floor(r() * pool);
    const m = r() < 0.5 ? `user:u${i}@example.com` : `group:G${i % 50}@Example.com`;
    return r() < 0.1
      ? m
          .toUpperCase()
          .replace(/^USER:/, "user:")
          .replace(/^GROUP:/, "group:")
      : r() < 0.03
        ? "${v}"
        : m;
  };
  const roles = ["roles/a", "roles/b", "roles/c"];
  const cond = () => (r() < 0.2 ? { title: pick(["t1", "t2"]), expression: "true" } : undefined);
  const resources: Record<string, unknown> = {};
  for (let i = 0; i < 24; i++) {
    const name = pick(["rp-1", "rp-2", "us-central1/rp-1", "rp-3"]);
    const kind = r();
    const c = cond();
    if (kind < 0.5)
      resources[`b${i}`] = {
        type: "cloudnative:backup/v1:RestorePlanIamBinding",
        properties: {
          name,
          role: pick(roles),
          members: Array.from({ length: Math.floor(r() * 700) }, member),
          ...(c ? { condition: c } : {}),
        },
      };
    else if (kind < 0.8)
      resources[`m${i}`] = {
        type: "cloudnative:backup/v1:RestorePlanIamMember",
        properties: { name, role: pick(roles), member: member(), ...(c ? { condition: c } : {}) },
      };
    else
      resources[`p${i}`] = {
        type: "cloudnative:backup/v1:RestorePlanIamPolicy",
        properties: {
          name,
          bindings: Array.from({ length: 3 }, () => ({
            role: pick(roles),
            members: Array.from({ length: Math.floor(r() * 300) }, member),
            ...(cond() ? { condition: cond() } : {}),
          })),
        },
      };
  }
  const src = new SourceDocument("/virtual/stack.yaml", JSON.stringify({ name: "s", resources }, null, 1));
  const doc = src.toJS() as { resources: Record<string, { type: string; properties: Record<string, unknown> }> };
  const decls = new Map<string, ResourceDecl>();
  for (const [n, v] of Object.entries(doc.resources))
    decls.set(n, {
      name: n,
      decl: n,
      type: v.type,
      driver: resourceDriver(v.type)!,
      properties: v.properties,
      options: { dependsOn: [], protect: false, ignoreChanges: [] },
      refs: [],
    });
  return {
    file: src.file,
    source: src,
    provider: { project: "p", location: "us-central1" },
    resources: decls,
  } as unknown as StackModel;
}

describe("policy size at load: distinct grants per binding", () => {
  it("finds what the one-set-per-object count found, on random stacks", () => {
    let over = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const stack = randomStack(seed);
      const expected = oldOver(stack);
      const got = stackPolicySizeErrors(stack);
      expect(got.map((d) => d.address)).toEqual(expected.map((e) => e.over));
      expect(got.map((d) => d.summary)).toEqual(
        expected.map(
          (e) => `${e.over}: the stack grants ${e.size} principals on ${e.object}, more than one policy may hold`,
        ),
      );
      over += expected.length;
    }
    expect(over).toBeGreaterThan(10);
  });
});
