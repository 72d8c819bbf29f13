// ClaimIndex makes a grant's map of member claims only with its first member claim
// (src/drivers/claims.ts): on random sequences of claims it must find a conflict exactly when
// some held claim conflicts (claimsConflict against every held claim), and name a conflicting one.
import { describe, expect, it } from "vitest";
import { ClaimIndex, claimsConflict } from "../../src/claims/conflict-rule.js";
import type { Claim } from "../../src/drivers/types.js";
import { seededRandom } from "../support/seeded-random.js";

describe("ClaimIndex on random claims", () => {
  it("agrees with comparing every held claim", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = seededRandom(seed);
      const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)]!;
      const index = new ClaimIndex<number>();
      const held: { owner: number; claim: Claim }[] = [];
      for (let i = 0; i < 40; i++) {
        const object = pick(["o1", "o2"]);
        const role = pick(["roles/a", "roles/b"]);
        const condition = r() < 0.3 ? { title: "t", expression: "true" } : undefined;
        const k = r();
        const claim: Claim =
          k < 0.05
            ? { scope: "policy", kind: "restorePlan", object }
            : k < 0.35
              ? { scope: "binding", kind: "restorePlan", object, role, ...(condition ? { condition } : {}) }
              : {
                  scope: "member",
                  kind: "restorePlan",
                  object,
                  role,
                  member: pick(["user:a@x.com", "user:A@x.com", "user:b@x.com", "group:g@x.com"]),
                  ...(condition ? { condition } : {}),
                };
        const found = index.conflict([claim]);
        const expected = held.filter((h) => claimsConflict(h.claim, claim) !== undefined);
        expect(found !== undefined, `seed ${seed} claim ${i}`).toBe(expected.length > 0);
        if (found) {
          expect(expected.map((h) => h.owner)).toContain(found.owner);
          expect(found.kind).toBe(claimsConflict(found.claim, claim));
        } else {
          index.hold([claim], i);
          held.push({ owner: i, claim });
        }
      }
    }
  });
});
