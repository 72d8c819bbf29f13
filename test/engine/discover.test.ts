// Discovery's core with a fake cloud port: the lists (every location the service names, or those
// asked), the grants each state claim covers (policy, binding, member; conditions compared), the
// filters, one policy read per object within the parallelism, and what --generate may adopt.
import { describe, expect, it } from "vitest";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import { adoptablePolicies, checkDiscoverRequest, discover } from "../../src/engine/discover.js";
import type { Policy } from "../../src/generated/schemas.js";
import type { ResourceClaim } from "../../src/claims/claims.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";

const rp = (l: string, id: string) => `projects/p/locations/${l}/restorePlans/${id}`;
const COND = { title: "t", expression: "true" };
const POLICIES: Record<string, Policy> = {
  [rp("a", "x")]: {
    bindings: [
      { role: "roles/viewer", members: ["user:ann@example.com", "user:bob@example.com"] },
      { role: "roles/editor", members: ["user:cy@example.com"], condition: COND },
    ],
  },
  [rp("b", "y")]: { bindings: [{ role: "roles/viewer", members: ["user:dee@example.com"] }] },
};

function port(): CloudPort & { reads: string[]; inFlight: number; most: number } {
  const p = {
    reads: [] as string[],
    inFlight: 0,
    most: 0,
    async listLocations() {
      return ["b", "a"];
    },
    async listObjects(kind: string, _project: string, location: string) {
      return kind === "restorePlan" ? Object.keys(POLICIES).filter((n) => n.includes(`/${location}/`)) : [];
    },
    async getIamPolicy(_kind: string, name: string) {
      p.reads.push(name);
      p.inFlight++;
      p.most = Math.max(p.most, p.inFlight);
      await new Promise((r) => setImmediate(r));
      p.inFlight--;
      return POLICIES[name];
    },
    getFederation: () => Promise.reject(new Error("unused")),
    modifyPolicy: () => Promise.reject(new Error("unused")),
  };
  return p as unknown as CloudPort & { reads: string[]; inFlight: number; most: number };
}

const claims: ResourceClaim[] = [
  {
    address: "bob",
    claim: {
      scope: "member",
      kind: "restorePlan",
      object: rp("a", "x"),
      role: "roles/viewer",
      member: "user:bob@example.com",
    },
  },
  {
    address: "eds",
    claim: { scope: "binding", kind: "restorePlan", object: rp("a", "x"), role: "roles/editor", condition: COND },
  },
  { address: "other", claim: { scope: "binding", kind: "restorePlan", object: rp("a", "x"), role: "roles/editor" } },
];
const base = { project: "p", locations: [], kinds: [], parallelism: 1 };

describe("discover", () => {
  it("lists every location, reads each policy once within the parallelism, marks managed grants", async () => {
    const fake = port();
    const r = await discover(fake, base, claims);
    expect(r.locations).toEqual({ restorePlan: ["a", "b"], endpoint: ["a", "b"] });
    expect(r.objects.map((o) => o.name)).toEqual([rp("a", "x"), rp("b", "y")]);
    expect(fake.reads.sort()).toEqual([rp("a", "x"), rp("b", "y")]);
    expect(fake.most).toBe(1);
    const x = r.objects[0]!.grants.map((g) => [g.member, g.managedBy]);
    expect(x).toEqual([
      ["user:ann@example.com", []],
      ["user:bob@example.com", ["bob"]],
      ["user:cy@example.com", ["eds"]],
    ]);
  });

  it("filters by kind, location, name glob and role", async () => {
    const r = await discover(port(), { ...base, kinds: ["restorePlan"], locations: ["a"], role: "roles/edit*" }, []);
    expect(r.objects.map((o) => [o.name, o.grants.map((g) => g.role)])).toEqual([[rp("a", "x"), ["roles/editor"]]]);
    const byName = await discover(port(), { ...base, nameGlob: "y" }, []);
    expect(byName.objects.map((o) => o.name)).toEqual([rp("b", "y")]);
  });

  it("refuses a bad project, location or glob as the user's error", () => {
    expect(() => checkDiscoverRequest({ ...base, project: "" })).toThrow(UserError);
    expect(() => checkDiscoverRequest({ ...base, locations: ["a/b"] })).toThrow(UserError);
    expect(() => checkDiscoverRequest({ ...base, role: "roles/[x" })).toThrow(/not a valid glob/);
  });

  it("adopts the unmanaged grants: a member alone, or with --as binding the bindings nobody manages", async () => {
    const r = await discover(port(), base, claims);
    const member = adoptablePolicies(r, "member");
    expect(member.skipped).toBe(0);
    expect(member.policies[0]).toEqual({
      name: rp("a", "x"),
      policy: { bindings: [{ role: "roles/viewer", members: ["user:ann@example.com"] }] },
    });
    const binding = adoptablePolicies(r, "binding");
    expect(binding.skipped).toBe(1);
    expect(binding.policies.map((p) => p.name)).toEqual([rp("b", "y")]);
  });
});
