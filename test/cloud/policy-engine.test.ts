import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { CloudError } from "../../src/cloud/errors.js";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import type { CloudEvent } from "../../src/cloud/cloud-events.js";
import type { Policy } from "../../src/generated/schemas.js";
import { FakePolicyServer, googleError, recordingSleep } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const EP = "projects/my-project/locations/us-central1/endpoints/churn";
const ROLE = "roles/gkebackup.viewer";
const UNTIL_2027 = { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };
const AUDIT = [
  {
    service: "allServices",
    auditLogConfigs: [{ logType: "DATA_READ" as const, exemptedMembers: ["user:x@example.com"] }],
  },
];

function setup() {
  const server = new FakePolicyServer();
  const events: CloudEvent[] = [];
  const client = new CloudClient({
    endpoint: "http://127.0.0.1:1",
    env: {},
    fetch: server.fetch,
    onEvent: (e) => events.push(e),
  });
  const { delays, sleep } = recordingSleep();
  return { server, client, events, delays, sleep };
}

function rich(): Omit<Policy, "etag"> {
  return {
    version: 3,
    bindings: [
      { role: "roles/owner", members: ["user:owner@example.com"] },
      { role: ROLE, members: ["user:carol@example.com", "user:Alice@Example.com"] },
      { role: ROLE, members: ["group:sre@example.com"], condition: UNTIL_2027 },
      { role: ROLE, members: ["user:temp@example.com"], condition: { ...UNTIL_2027, description: "temporary" } },
    ],
    auditConfigs: AUDIT,
  };
}

describe("modifyPolicy", () => {
  it("writes once with the etag it read and the update mask", async () => {
    const { server, client, sleep } = setup();
    server.put(RP, { version: 1, bindings: [{ role: ROLE, members: ["user:carol@example.com"] }] });
    const etag = server.policies.get(RP)!.etag;
    const r = await modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "addMember", role: ROLE, member: "user:dave@example.com" }],
      { sleep },
    );
    expect(r).toMatchObject({ written: true, attempts: 1, reads: 1, writes: 1 });
    expect(server.setBodies[0]!.policy.etag).toBe(etag);
    expect(server.setBodies[0]!.updateMask).toBe("bindings,etag");
    expect(r.policy.bindings).toEqual([{ role: ROLE, members: ["user:carol@example.com", "user:dave@example.com"] }]);
    expect(r.policy.etag).toBe(server.policies.get(RP)!.etag);
  });

  it("does not write when nothing changes", async () => {
    const { server, client, events } = setup();
    server.put(RP, rich());
    const r = await modifyPolicy(client, "restorePlan", RP, [
      { kind: "addMember", role: ROLE, member: "user:carol@example.com" },
      { kind: "removeMember", role: "roles/editor", member: "user:nobody@example.com" },
    ]);
    expect(r).toMatchObject({ written: false, attempts: 1, reads: 1, writes: 0 });
    expect(server.sets).toBe(0);
    expect(r.policy).toEqual(server.policies.get(RP));
    expect(events.filter((e) => e.type === "policy")).toEqual([
      { type: "policy", kind: "restorePlan", resource: RP, round: 1, maxRounds: 12, outcome: "unchanged" },
    ]);
  });

  it("on ABORTED re-reads, re-applies and keeps the concurrent writer's change", async () => {
    const { server, client, delays, sleep, events } = setup();
    server.put(EP, { bindings: [{ role: "roles/aiplatform.user", members: ["user:a@example.com"] }] });
    let interfered = false;
    server.beforeSet = (name) => {
      if (interfered) return;
      interfered = true;
      server.mutate(name, (p) => p.bindings![0]!.members.push("user:concurrent@example.com"));
    };
    const r = await modifyPolicy(
      client,
      "endpoint",
      EP,
      [{ kind: "addMember", role: "roles/aiplatform.user", member: "user:mine@example.com" }],
      { sleep, random: () => 0.5 },
    );
    expect(r).toMatchObject({ written: true, attempts: 2, reads: 2, writes: 2 });
    expect(delays).toEqual([10]); // base 20 ms, full jitter at 0.5
    expect(server.policies.get(EP)!.bindings![0]!.members).toEqual([
      "user:a@example.com",
      "user:concurrent@example.com",
      "user:mine@example.com",
    ]);
    expect(events.filter((e) => e.type === "policy").map((e) => (e.type === "policy" ? e.outcome : ""))).toEqual([
      "aborted",
      "written",
    ]);
  });

  it("gives up after bounded ABORTED rounds with a clear error", async () => {
    const { server, client, delays, sleep } = setup();
    server.put(RP, { bindings: [] });
    server.beforeSet = (name) => server.mutate(name, () => {});
    const err = (await modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }],
      { maxAttempts: 4, sleep, random: () => 1 },
    ).catch((e: unknown) => e)) as CloudError;
    expect(err).toBeInstanceOf(CloudError);
    expect(err).toMatchObject({ status: "ABORTED", httpStatus: 409, attempts: 4, resource: RP, retryable: false });
    expect(err.message).toMatch(
      new RegExp(
        `^setIamPolicy ${RP} gave up after 4 read-modify-write attempts over \\d+\\.\\ds \\(4 reads, 4 ` +
          `writes\\): .*concurrent writers.*ABORTED \\(409\\): There were concurrent policy changes`,
      ),
    );
    expect(server.gets).toBe(4);
    expect(server.sets).toBe(4);
    expect(delays).toEqual([20, 40, 80]); // exponential, capped only at 2 s
  });

  it("default bound is 12 rounds with delays capped at 2 s", async () => {
    const { server, client, delays, sleep } = setup();
    server.put(RP, { bindings: [] });
    server.beforeSet = (name) => server.mutate(name, () => {});
    await expect(
      modifyPolicy(client, "restorePlan", RP, [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }], {
        sleep,
        random: () => 0.999999,
      }),
    ).rejects.toThrow(/gave up after 12/);
    expect(delays).toHaveLength(11);
    expect(Math.max(...delays)).toBeLessThan(2000);
    expect(delays[6]).toBeGreaterThan(1000);
  });

  it("propagates other errors at once", async () => {
    const { server, client } = setup();
    server.put(RP, { bindings: [] });
    server.beforeSet = () => googleError(400, "INVALID_ARGUMENT", "bad member");
    await expect(
      modifyPolicy(client, "restorePlan", RP, [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }]),
    ).rejects.toMatchObject({ status: "INVALID_ARGUMENT" });
    expect(server.sets).toBe(1);
    await expect(
      modifyPolicy(client, "restorePlan", `${RP}-missing`, [
        { kind: "addMember", role: ROLE, member: "user:a@example.com" },
      ]),
    ).rejects.toMatchObject({ status: "NOT_FOUND" });
  });

  it(
    "a binding edit preserves other roles, conditional bindings " + "of the same role, auditConfigs and version",
    async () => {
      const { server, client } = setup();
      server.put(RP, rich());
      await modifyPolicy(client, "restorePlan", RP, [
        { kind: "setBinding", role: ROLE, members: ["user:new@example.com"] },
      ]);
      const sent = server.setBodies[0]!.policy;
      expect(sent.auditConfigs).toEqual(AUDIT);
      expect(sent.version).toBe(3);
      const after = server.policies.get(RP)!;
      expect(after.auditConfigs).toEqual(AUDIT);
      expect(after.version).toBe(3);
      expect(after.bindings).toEqual([
        { role: "roles/owner", members: ["user:owner@example.com"] },
        { role: ROLE, members: ["user:new@example.com"] },
        { role: ROLE, members: ["group:sre@example.com"], condition: UNTIL_2027 },
        { role: ROLE, members: ["user:temp@example.com"], condition: { ...UNTIL_2027, description: "temporary" } },
      ]);
    },
  );

  it("removing a binding removes just that binding", async () => {
    const { server, client } = setup();
    server.put(RP, rich());
    await modifyPolicy(client, "restorePlan", RP, [{ kind: "removeBinding", role: ROLE, condition: UNTIL_2027 }]);
    const after = server.policies.get(RP)!;
    expect(after.bindings!.map((b) => [b.role, b.condition?.description ?? (b.condition ? "cond" : "-")])).toEqual([
      ["roles/owner", "-"],
      [ROLE, "-"],
      [ROLE, "temporary"],
    ]);
    expect(after.auditConfigs).toEqual(AUDIT);
  });

  it("members compare case-insensitively for add and remove", async () => {
    const { server, client } = setup();
    server.put(RP, rich());
    const add = await modifyPolicy(client, "restorePlan", RP, [
      { kind: "addMember", role: ROLE, member: "user:alice@example.com" },
    ]);
    expect(add.written).toBe(false);
    const rm = await modifyPolicy(client, "restorePlan", RP, [
      { kind: "removeMember", role: ROLE, member: "user:ALICE@example.COM" },
    ]);
    expect(rm.written).toBe(true);
    expect(server.policies.get(RP)!.bindings![1]).toEqual({ role: ROLE, members: ["user:carol@example.com"] });
  });

  it("conditions are keyed by title, description and expression", async () => {
    const { server, client } = setup();
    server.put(RP, rich());
    // Same title and expression, other description: a different binding.
    await modifyPolicy(client, "restorePlan", RP, [
      {
        kind: "addMember",
        role: ROLE,
        member: "user:z@example.com",
        condition: { ...UNTIL_2027, description: "other" },
      },
    ]);
    expect(server.policies.get(RP)!.bindings).toHaveLength(5);
    // All three equal: edits the existing conditional binding.
    await modifyPolicy(client, "restorePlan", RP, [
      {
        kind: "addMember",
        role: ROLE,
        member: "user:y@example.com",
        condition: { ...UNTIL_2027, description: "temporary" },
      },
    ]);
    const b = server.policies.get(RP)!.bindings!;
    expect(b).toHaveLength(5);
    expect(b[3]!.members).toEqual(["user:temp@example.com", "user:y@example.com"]);
    // Same title, other expression: a different binding too.
    await modifyPolicy(client, "restorePlan", RP, [
      { kind: "addMember", role: ROLE, member: "user:w@example.com", condition: { ...UNTIL_2027, expression: "true" } },
    ]);
    expect(server.policies.get(RP)!.bindings).toHaveLength(6);
  });

  it("uses an initial policy without reading, and re-reads when it turns out stale", async () => {
    const { server, client, sleep } = setup();
    server.put(RP, { bindings: [{ role: ROLE, members: ["user:a@example.com"] }] });
    const initial = structuredClone(server.policies.get(RP)!);
    const r1 = await modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "addMember", role: ROLE, member: "user:b@example.com" }],
      { initial, sleep },
    );
    expect(r1).toMatchObject({ written: true, reads: 0, writes: 1, attempts: 1 });
    // `initial` is now stale: ABORTED, re-read, success.
    const r2 = await modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "addMember", role: ROLE, member: "user:c@example.com" }],
      { initial, sleep },
    );
    expect(r2).toMatchObject({ written: true, reads: 1, writes: 2, attempts: 2 });
    expect(server.policies.get(RP)!.bindings![0]!.members).toEqual([
      "user:a@example.com",
      "user:b@example.com",
      "user:c@example.com",
    ]);
  });

  it("confirms against the server when the initial policy says there is nothing to do", async () => {
    const { server, client } = setup();
    server.put(RP, { bindings: [{ role: ROLE, members: ["user:a@example.com"] }] });
    const stale = structuredClone(server.policies.get(RP)!);
    server.mutate(RP, (p) => (p.bindings = []));
    // The stale copy (the plan's) showed no change; the policy as it is now needs a grant the
    // plan did not show: refused, not written (policy-engine-approved.test.ts has the rest).
    const e = await modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "addMember", role: ROLE, member: "user:a@example.com" }],
      { initial: stale },
    ).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toMatchObject({ status: "FAILED_PRECONDITION" });
    expect(server.sets).toBe(0);
    expect(server.policies.get(RP)!.bindings).toEqual([]);
  });
});
