// The drift classifier (src/plan/drift.ts): each class (a)-(e) from a state, the stack's claims and
// live policies, and what is not drift (an etag or version alone, a grant the stack is about to adopt).
import { describe, expect, it } from "vitest";
import type { Policy, State } from "../../src/generated/schemas.js";
import { classifyDrift, grantKey, type DriftInput } from "../../src/plan/drift.js";
import { claimsOfValue } from "../../src/claims/claims.js";

const OBJ = "projects/my-project/locations/us-central1/restorePlans/nightly";
const BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
const MEMBER = "cloudnative:backup/v1:RestorePlanIamMember";
const VIEWER = "roles/gkebackup.viewer";
const ADMIN = "roles/gkebackup.admin";
const T1 = { title: "t", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };
const T2 = { title: "t", expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' };

const resource = (address: string, type: string, inputs: Record<string, unknown>) => ({
  address,
  mode: "managed" as const,
  type,
  name: address,
  id: address,
  inputs: { name: OBJ, ...inputs },
  outputs: {},
});

const state = {
  version: 1,
  lineage: "l",
  serial: 3,
  stack: "s",
  resources: [
    resource("viewers", BINDING, { role: VIEWER, members: ["user:alice@example.com", "user:bob@example.com"] }),
    resource("erin", MEMBER, { role: ADMIN, member: "user:erin@example.com" }),
    resource("frank", MEMBER, { role: ADMIN, member: "user:frank@example.com", condition: T1 }),
  ],
} as unknown as State;

const approved: Policy = {
  etag: "BwA=",
  version: 3,
  bindings: [
    { role: VIEWER, members: ["user:alice@example.com", "user:bob@example.com"] },
    { role: ADMIN, members: ["user:erin@example.com"] },
    { role: ADMIN, members: ["user:frank@example.com"], condition: T1 },
  ],
};

function input(
  live: Policy,
  revokes: string[] = [],
  stackClaims = state.resources.flatMap((r) => claimsOfValue(r.type, r.address, r.inputs)),
): DriftInput {
  return {
    state,
    stackClaims,
    live: new Map([[`restorePlan ${OBJ}`, live]]),
    revokes: new Map([[OBJ, new Set(revokes)]]),
  };
}

describe("classifyDrift", () => {
  it("finds nothing when only the etag and version changed", () => {
    expect(classifyDrift(input({ ...approved, etag: "BwB=", version: 1 }))).toEqual([]);
  });

  it("classifies each difference (a)-(e)", () => {
    const live: Policy = {
      bindings: [
        { role: VIEWER, members: ["user:alice@example.com", "user:mallory@example.com"] },
        { role: ADMIN, members: ["deleted:user:erin@example.com?uid=123", "user:grace@example.com"] },
        { role: ADMIN, members: ["user:frank@example.com"], condition: T2 },
      ],
    };
    const mallory = grantKey(VIEWER, undefined, "user:mallory@example.com");
    const found = classifyDrift(input(live, [mallory]));
    expect(found.map((f) => [f.class, f.member, f.address])).toEqual([
      ["removed", "user:bob@example.com", "viewers"],
      ["deleted-principal", "user:erin@example.com", "erin"],
      ["condition", "user:frank@example.com", "frank"],
      ["added", "user:mallory@example.com", "viewers"],
      ["unmanaged", "user:grace@example.com", undefined],
    ]);
    expect(found[1]!.live).toBe("deleted:user:erin@example.com?uid=123");
    expect(found[2]).toMatchObject({ condition: T2, was: T1 });
    expect(found[3]!.revokedByNextApply).toBe(true);
  });

  it("a grant the stack declares (not applied yet) is not unmanaged", () => {
    const live = { bindings: [...approved.bindings!, { role: ADMIN, members: ["user:grace@example.com"] }] };
    const stack = claimsOfValue(MEMBER, "grace", { name: OBJ, role: ADMIN, member: "user:grace@example.com" });
    const claims = state.resources.flatMap((r) => claimsOfValue(r.type, r.address, r.inputs)).concat(stack);
    expect(classifyDrift(input(live, [], claims))).toEqual([]);
  });

  it("every owned grant of an object that is gone is removed", () => {
    const found = classifyDrift({ ...input(approved), live: new Map() });
    expect(found.map((f) => [f.class, f.objectGone])).toEqual(Array(4).fill(["removed", true]));
  });

  it("members compare by key: a case change of an email is not drift", () => {
    const live = structuredClone(approved);
    live.bindings![0]!.members = ["user:Alice@Example.com", "user:bob@example.com"];
    expect(classifyDrift(input(live))).toEqual([]);
  });
});
