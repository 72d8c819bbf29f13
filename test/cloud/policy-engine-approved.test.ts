// A read-modify-write re-applies the reviewed changes after an etag conflict, but never makes a
// change the reviewer did not see: when the policy another writer left would make the same
// modifications grant or revoke something else, the write is refused and nothing is written.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { CloudError } from "../../src/cloud/errors.js";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import type { Policy } from "../../src/generated/schemas.js";
import { FakePolicyServer, recordingSleep } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const VIEWER = "roles/gkebackup.viewer";
const ADMIN = "roles/gkebackup.admin";
const ALICE = "user:alice@example.com";
const BOB = "user:bob@example.com";
const CAROL = "user:carol@example.com";

function setup(bindings: Policy["bindings"]) {
  const server = new FakePolicyServer();
  const client = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: server.fetch });
  const { sleep } = recordingSleep();
  server.put(RP, { version: 3, bindings });
  /** The plan's copy of the policy: what the reviewer's plan was computed from. */
  const planned = structuredClone(server.policies.get(RP)!);
  return { server, client, sleep, planned };
}

/** Another writer edits the policy once, just before our first write reaches the server. */
function interfere(server: FakePolicyServer, edit: (p: Policy) => void): void {
  let done = false;
  server.beforeSet = (name) => {
    if (done) return;
    done = true;
    server.mutate(name, edit);
  };
}

const membersOf = (p: Policy | undefined, role: string) =>
  p?.bindings?.find((b) => b.role === role && !b.condition)?.members ?? [];

describe("modifyPolicy with the plan's copy of the policy", () => {
  it("refuses to revoke a member another writer added after the plan, and writes nothing", async () => {
    const { server, client, sleep, planned } = setup([{ role: VIEWER, members: [ALICE] }]);
    interfere(server, (p) => p.bindings![0]!.members.push(BOB));
    const run = modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "setBinding", role: VIEWER, members: [ALICE, CAROL] }],
      { initial: planned, sleep },
    );
    const e = await run.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CloudError);
    expect((e as CloudError).status).toBe("FAILED_PRECONDITION");
    expect((e as CloudError).message).toContain(`revoke ${BOB} from ${VIEWER}`);
    expect((e as CloudError).message).toMatch(/not in the plan/);
    expect(membersOf(server.policies.get(RP), VIEWER)).toEqual([ALICE, BOB]);
    expect(server.sets).toBe(1); // the refused first write (stale etag); no second one
  });

  it("refuses to grant again a member another writer removed after the plan", async () => {
    const { server, client, sleep, planned } = setup([{ role: VIEWER, members: [ALICE, CAROL] }]);
    interfere(server, (p) => (p.bindings![0]!.members = [ALICE]));
    const run = modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "setBinding", role: VIEWER, members: [ALICE, CAROL, BOB] }],
      { initial: planned, sleep },
    );
    const e = await run.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect((e as CloudError).status).toBe("FAILED_PRECONDITION");
    expect((e as CloudError).message).toContain(`grant ${CAROL} ${VIEWER}`);
    expect(membersOf(server.policies.get(RP), VIEWER)).toEqual([ALICE]);
  });

  it("re-applies when the other writer's change is left as it is", async () => {
    const { server, client, sleep, planned } = setup([{ role: VIEWER, members: [ALICE] }]);
    interfere(server, (p) => p.bindings!.push({ role: ADMIN, members: [BOB] }));
    const r = await modifyPolicy(
      client,
      "restorePlan",
      RP,
      [{ kind: "setBinding", role: VIEWER, members: [ALICE, CAROL] }],
      { initial: planned, sleep },
    );
    expect(r).toMatchObject({ written: true, attempts: 2 });
    expect(membersOf(server.policies.get(RP), VIEWER)).toEqual([ALICE, CAROL]);
    expect(membersOf(server.policies.get(RP), ADMIN)).toEqual([BOB]);
  });

  it("refuses when the plan's copy made no change but the policy read again would", async () => {
    const { server, client, sleep, planned } = setup([{ role: VIEWER, members: [ALICE] }]);
    server.mutate(RP, (p) => p.bindings![0]!.members.push(BOB));
    const run = modifyPolicy(client, "restorePlan", RP, [{ kind: "setBinding", role: VIEWER, members: [ALICE] }], {
      initial: planned,
      sleep,
    });
    const e = await run.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect((e as CloudError).status).toBe("FAILED_PRECONDITION");
    expect(server.sets).toBe(0);
  });

  it("says which policy the final round started from: a grant another writer made first is found there", async () => {
    const { server, client, sleep, planned } = setup([{ role: VIEWER, members: [ALICE] }]);
    interfere(server, (p) => p.bindings![0]!.members.push(CAROL));
    const r = await modifyPolicy(client, "restorePlan", RP, [{ kind: "addMember", role: VIEWER, member: CAROL }], {
      initial: planned,
      sleep,
    });
    expect(r).toMatchObject({ written: false, attempts: 2 });
    expect(membersOf(r.base, VIEWER)).toEqual([ALICE, CAROL]);
  });

  it("without the plan's copy, re-applies as before (nothing to compare with)", async () => {
    const { server, client, sleep } = setup([{ role: VIEWER, members: [ALICE] }]);
    interfere(server, (p) => p.bindings![0]!.members.push(BOB));
    const r = await modifyPolicy(client, "restorePlan", RP, [{ kind: "addMember", role: VIEWER, member: CAROL }], {
      sleep,
    });
    expect(r).toMatchObject({ written: true });
    expect(membersOf(server.policies.get(RP), VIEWER)).toEqual([ALICE, BOB, CAROL]);
  });
});
