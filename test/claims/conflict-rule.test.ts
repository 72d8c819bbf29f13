// One conflict rule across types and scopes, and the index that applies it to a whole stack.
import { describe, expect, it } from "vitest";
import { ClaimIndex, claimsConflict, conflictSummary } from "../../src/claims/conflict-rule.js";
import type { Claim } from "../../src/drivers/types.js";

const RP = "projects/p/locations/l/restorePlans/a";
const RP2 = "projects/p/locations/l/restorePlans/b";
const COND = { title: "t", expression: "request.time < timestamp('2030-01-01T00:00:00Z')" };

const policy = (object = RP): Claim => ({ scope: "policy", kind: "restorePlan", object });
const binding = (role = "roles/x.y", condition?: typeof COND, object = RP): Claim => ({
  scope: "binding",
  kind: "restorePlan",
  object,
  role,
  ...(condition ? { condition } : {}),
});
const member = (m: string, role = "roles/x.y", condition?: typeof COND, object = RP): Claim => ({
  scope: "member",
  kind: "restorePlan",
  object,
  role,
  member: m,
  ...(condition ? { condition } : {}),
});

describe("claimsConflict", () => {
  it("policy conflicts with anything on the same object, in either order", () => {
    for (const other of [policy(), binding(), member("user:a@example.com"), binding("roles/other", COND)]) {
      expect(claimsConflict(policy(), other)).toBe("policy");
      expect(claimsConflict(other, policy())).toBe("policy");
    }
  });

  it("nothing conflicts across objects", () => {
    expect(claimsConflict(policy(RP), policy(RP2))).toBeUndefined();
    expect(claimsConflict(policy(RP), binding("roles/x.y", undefined, RP2))).toBeUndefined();
    expect(claimsConflict(binding(), binding("roles/x.y", undefined, RP2))).toBeUndefined();
    expect(
      claimsConflict(member("user:a@example.com"), member("user:a@example.com", "roles/x.y", undefined, RP2)),
    ).toBeUndefined();
  });

  it("binding vs binding: same role and condition only", () => {
    expect(claimsConflict(binding(), binding())).toBe("binding");
    expect(claimsConflict(binding("roles/x.y", COND), binding("roles/x.y", { ...COND }))).toBe("binding");
    expect(claimsConflict(binding(), binding("roles/other"))).toBeUndefined();
    expect(claimsConflict(binding(), binding("roles/x.y", COND))).toBeUndefined();
    expect(
      claimsConflict(binding("roles/x.y", COND), binding("roles/x.y", { ...COND, expression: "true" })),
    ).toBeUndefined();
    // The condition's title and description are part of its identity, as in a policy.
    expect(claimsConflict(binding("roles/x.y", COND), binding("roles/x.y", { ...COND, title: "u" }))).toBeUndefined();
    expect(
      claimsConflict(binding("roles/x.y", COND), binding("roles/x.y", { ...COND, description: "d" } as typeof COND)),
    ).toBeUndefined();
  });

  it("binding vs member: a member of a role whose binding is claimed, in either order", () => {
    expect(claimsConflict(binding(), member("user:a@example.com"))).toBe("member-of-binding");
    expect(claimsConflict(member("user:a@example.com"), binding())).toBe("member-of-binding");
    expect(claimsConflict(binding("roles/x.y", COND), member("user:a@example.com", "roles/x.y", COND))).toBe(
      "member-of-binding",
    );
    expect(claimsConflict(binding(), member("user:a@example.com", "roles/other"))).toBeUndefined();
    expect(claimsConflict(binding(), member("user:a@example.com", "roles/x.y", COND))).toBeUndefined();
  });

  it("member vs member: the same canonical member, role and condition", () => {
    expect(claimsConflict(member("user:a@example.com"), member("user:a@example.com"))).toBe("member");
    expect(claimsConflict(member("user:a@example.com"), member("user:A@Example.com"))).toBe("member");
    expect(claimsConflict(member("user:a@example.com"), member("user:b@example.com"))).toBeUndefined();
    expect(claimsConflict(member("user:a@example.com"), member("user:a@example.com", "roles/other"))).toBeUndefined();
    expect(
      claimsConflict(member("user:a@example.com", "roles/x.y", COND), member("user:a@example.com")),
    ).toBeUndefined();
  });
});

describe("ClaimIndex", () => {
  it("finds the earlier owner of a conflicting claim, and records only what does not conflict", () => {
    const index = new ClaimIndex<string>();
    const add = (owner: string, c: Claim) => {
      const found = index.conflict([c]);
      if (!found) index.hold([c], owner);
      return found && { kind: found.kind, owner: found.owner };
    };
    expect(add("m1", member("user:a@example.com"))).toBeUndefined();
    expect(add("m2", member("user:b@example.com"))).toBeUndefined();
    expect(add("m3", member("user:A@example.com"))).toEqual({ kind: "member", owner: "m1" });
    expect(add("b1", binding())).toEqual({ kind: "member-of-binding", owner: "m1" });
    expect(add("b2", binding("roles/other"))).toBeUndefined();
    expect(add("b3", binding("roles/other"))).toEqual({ kind: "binding", owner: "b2" });
    expect(add("m4", member("user:c@example.com", "roles/other"))).toEqual({ kind: "member-of-binding", owner: "b2" });
    expect(add("p1", policy())).toEqual({ kind: "policy", owner: "m1" });
    expect(add("p2", policy(RP2))).toBeUndefined();
    expect(add("b4", binding("roles/z", COND, RP2))).toEqual({ kind: "policy", owner: "p2" });
    expect(add("p3", policy(RP2))).toEqual({ kind: "policy", owner: "p2" });
  });

  it("indexes 100,000 member claims of one role in linear time", () => {
    // Counted, not timed: every read of a held claim's fields (by hold, and by conflict's
    // comparisons). An index compares a new claim with a few held ones; a scan of the role's
    // members would read every held claim at every call, 100,000 times more.
    let reads = 0;
    const counted = (c: Claim): Claim =>
      new Proxy(c, {
        get(target, key, receiver) {
          reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
    const index = new ClaimIndex<number>();
    const N = 100_000;
    for (let i = 0; i < N; i++) {
      const c = [member(`user:u${i}@example.com`)];
      expect(index.conflict(c)).toBeUndefined();
      index.hold(c.map(counted), i);
    }
    expect(index.conflict([member("user:u99999@example.com")])?.owner).toBe(99_999);
    expect(reads).toBeLessThan(20 * N);
  });

  it("describes the conflicts the callers have no wording of their own for", () => {
    const index = new ClaimIndex<string>();
    index.hold([binding()], "viewers");
    const c = index.conflict([member("user:a@example.com")])!;
    expect(conflictSummary(c, "alice", member("user:a@example.com"))).toBe(
      `resources "viewers" and "alice" both manage user:a@example.com of role roles/x.y on ${RP}: ` +
        `"viewers" manages the whole binding, "alice" one member of it`,
    );
    // An instance address is quoted as it is, not wrapped in quotes of its own.
    expect(conflictSummary(c, 'team["a"]', member("user:a@example.com"))).toContain(
      `"viewers" manages the whole binding, team["a"] one member of it`,
    );
    const p = index.conflict([policy()])!;
    expect(conflictSummary(p, "all", policy())).toBe(
      `resources "viewers" and "all" both manage ${RP}: "all" manages its whole ` +
        `IAM policy, so "viewers" cannot manage part of it`,
    );
  });
});

describe("the role-and-condition key (a JSON string then the condition key, since issue 20)", () => {
  // The earlier key was JSON.stringify([role, conditionKey]): the new one must separate exactly
  // the same pairs, whatever quotes, separators or NULs the role and condition hold.
  const roles = ["roles/x.y", 'roles/"a', "roles/a\u0000", 'roles/a","', "", "roles/a\\", '"', 'roles/x.y\u0000["t"'];
  const conds = [
    undefined,
    COND,
    { title: "", expression: "" },
    { title: 'a","b', expression: "x" },
    { title: "a", description: '"', expression: "\u0000" },
    { title: "roles/x.y", expression: "" },
  ];
  const pairs = roles.flatMap((r) => conds.map((c) => [r, c] as const));
  it("two bindings conflict exactly when their roles and conditions are equal", () => {
    for (const [ra, ca] of pairs) {
      for (const [rb, cb] of pairs) {
        const same =
          ra === rb &&
          JSON.stringify([ca?.title, ca?.expression, (ca as { description?: string } | undefined)?.description]) ===
            JSON.stringify([cb?.title, cb?.expression, (cb as { description?: string } | undefined)?.description]);
        expect(claimsConflict(binding(ra, ca as typeof COND), binding(rb, cb as typeof COND))).toBe(
          same ? "binding" : undefined,
        );
        const index = new ClaimIndex<string>();
        index.hold([binding(ra, ca as typeof COND)], "a");
        expect(index.conflict([binding(rb, cb as typeof COND)])?.kind).toBe(same ? "binding" : undefined);
      }
    }
  });
});
