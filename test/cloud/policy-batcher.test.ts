import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { PolicyBatcher } from "../../src/cloud/policy-batcher.js";
import { FakePolicyServer, googleError } from "./fakes.js";

const ROLE = "roles/gkebackup.viewer";
const rp = (i: number) => `projects/my-project/locations/us-central1/restorePlans/plan-${i}`;

function setup() {
  const server = new FakePolicyServer();
  const client = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: server.fetch });
  return { server, client };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("PolicyBatcher", () => {
  it("merges submissions for the same policy into one read and one write", async () => {
    const { server, client } = setup();
    server.put(rp(1), { bindings: [{ role: "roles/owner", members: ["user:o@example.com"] }] });
    const b = new PolicyBatcher(client);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: `user:m${i}@example.com` }])),
    );
    expect(server.gets).toBe(1);
    expect(server.sets).toBe(1);
    expect(new Set(results).size).toBe(1); // everyone shares one result
    expect(results[0]).toMatchObject({ written: true, reads: 1, writes: 1 });
    const after = server.policies.get(rp(1))!;
    expect(after.bindings![0]).toEqual({ role: "roles/owner", members: ["user:o@example.com"] });
    expect(after.bindings![1]!.members).toHaveLength(8);
    expect(b.stats).toEqual({ submissions: 8, rounds: 1 });
  });

  it("submissions arriving while a round is in flight go to the next round", async () => {
    const { server, client } = setup();
    server.put(rp(1), { bindings: [] });
    const gate = deferred();
    const entered = deferred();
    server.beforeGet = async () => {
      if (server.gets === 1) {
        entered.resolve();
        await gate.promise;
      }
    };
    const b = new PolicyBatcher(client);
    const first = b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }]);
    await entered.promise; // round 1 has read-started
    const second = b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: "user:b@example.com" }]);
    const third = b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: "user:c@example.com" }]);
    gate.resolve();
    const [r1, r2, r3] = await Promise.all([first, second, third]);
    expect(r1).not.toBe(r2);
    expect(r2).toBe(r3);
    expect(server.gets).toBe(2);
    expect(server.sets).toBe(2);
    expect(server.setBodies[0]!.policy.bindings![0]!.members).toEqual(["user:a@example.com"]);
    expect(server.policies.get(rp(1))!.bindings![0]!.members).toEqual(["user:a@example.com", "user:b@example.com", "user:c@example.com"]);
    expect(b.stats.rounds).toBe(2);
  });

  it("runs different policies in parallel, bounded by parallelism", async () => {
    const { server, client } = setup();
    for (let i = 0; i < 7; i++) server.put(rp(i), { bindings: [] });
    let inFlight = 0;
    let peak = 0;
    server.beforeGet = async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 15));
      inFlight--;
    };
    const b = new PolicyBatcher(client, { parallelism: 3 });
    const results = await Promise.all(Array.from({ length: 7 }, (_, i) => b.submit("restorePlan", rp(i), [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }])));
    expect(results.every((r) => r.written)).toBe(true);
    expect(peak).toBe(3);
    expect(server.gets).toBe(7);
    expect(server.sets).toBe(7);
  });

  it("every submitter of a failed round gets the shared error", async () => {
    const { server, client } = setup();
    server.put(rp(1), { bindings: [] });
    server.beforeSet = () => googleError(403, "PERMISSION_DENIED", "caller may not set policy");
    const b = new PolicyBatcher(client);
    const all = await Promise.allSettled([
      b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }]),
      b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: "user:b@example.com" }]),
      b.submit("restorePlan", rp(2), [{ kind: "addMember", role: ROLE, member: "user:b@example.com" }]),
    ]);
    expect(all.map((s) => (s.status === "rejected" ? (s.reason as { status: string }).status : "ok"))).toEqual(["PERMISSION_DENIED", "PERMISSION_DENIED", "NOT_FOUND"]);
    expect(all[0]!.status === "rejected" && all[1]!.status === "rejected" && all[0].reason === all[1].reason).toBe(true);
    expect(server.sets).toBe(1);
    // The batcher stays usable after a failure.
    server.beforeSet = undefined;
    await expect(b.submit("restorePlan", rp(1), [{ kind: "addMember", role: ROLE, member: "user:c@example.com" }])).resolves.toMatchObject({ written: true });
    expect(b.active).toBe(0);
  });
});
