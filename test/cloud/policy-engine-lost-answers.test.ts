// A write whose answer is lost (Google commits a setIamPolicy and then answers 500, 503 or 504, or
// the connection resets) has an unknown outcome: the policy engine settles it by reading the
// policy again. Its edits there: the write landed (written, this call's own). Not there: it did
// not, and the round writes again with the fresh etag. Either way the caller learns a write of
// its own, never a grant found "meanwhile".
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { isCloudError } from "../../src/cloud/errors.js";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import type { CloudEvent } from "../../src/cloud/cloud-events.js";
import { FakePolicyServer, googleError, networkError, recordingSleep, type Reply } from "./fakes.js";

const EP = "projects/my-project/locations/us-central1/endpoints/churn";
const ROLE = "roles/aiplatform.user";
const ERIN = "user:erin@example.com";
const ADD = [{ kind: "addMember" as const, role: ROLE, member: ERIN }];

const LOST: Record<string, () => Reply> = {
  "500": () => googleError(500, "INTERNAL", "Internal error encountered."),
  "503": () => googleError(503, "UNAVAILABLE", "The service is currently unavailable."),
  "504": () => googleError(504, "DEADLINE_EXCEEDED", "The request deadline was exceeded."),
  reset: () => networkError("ECONNRESET"),
};

function setup() {
  const server = new FakePolicyServer();
  const events: CloudEvent[] = [];
  const { sleep } = recordingSleep();
  const client = new CloudClient({
    endpoint: "http://127.0.0.1:1",
    env: {},
    fetch: server.fetch,
    onEvent: (e) => events.push(e),
    retry: { sleep },
  });
  return { server, client, events, sleep };
}

const members = (server: FakePolicyServer) =>
  server.policies.get(EP)!.bindings?.find((b) => b.role === ROLE)?.members ?? [];

describe("a write whose answer is lost after it committed", () => {
  for (const [kind, reply] of Object.entries(LOST)) {
    it(`${kind}: the read that follows finds its edits: written, once`, async () => {
      const { server, client, events, sleep } = setup();
      server.put(EP, { version: 1, bindings: [{ role: ROLE, members: ["user:carol@example.com"] }] });
      let lost = 0;
      server.afterSet = () => (lost++ === 0 ? reply() : undefined);
      const initial = structuredClone(server.policies.get(EP)!);
      const r = await modifyPolicy(client, "endpoint", EP, ADD, { sleep, initial });
      expect(r.written).toBe(true);
      expect(members(server)).toEqual(["user:carol@example.com", ERIN]);
      // The grant was written once: no second write of the same edits.
      expect(server.policies.get(EP)!.bindings).toHaveLength(1);
      expect(events.filter((e) => e.type === "policy").map((e) => (e as { outcome: string }).outcome)).toEqual([
        "lost",
        "written",
      ]);
    });
  }

  it("a policy without an etag (a 500 is not retried blindly): settled by a read, written", async () => {
    const { server, client, sleep } = setup();
    server.put(EP, { version: 1, bindings: [] });
    server.policies.get(EP)!.etag = undefined;
    let lost = 0;
    server.afterSet = () => (lost++ === 0 ? LOST["500"]!() : undefined);
    const r = await modifyPolicy(client, "endpoint", EP, ADD, { sleep });
    expect(r.written).toBe(true);
    expect(members(server)).toEqual([ERIN]);
    expect(server.sets).toBe(1);
  });

  it("a lost answer of a write that did not land: written again with the fresh etag", async () => {
    const { server, client, sleep } = setup();
    server.put(EP, { version: 1, bindings: [] });
    server.policies.get(EP)!.etag = undefined;
    let failed = 0;
    // The first request fails before the server commits it (no etag: the transport does not retry a 500).
    server.beforeSet = () => (failed++ === 0 ? LOST["500"]!() : undefined);
    const r = await modifyPolicy(client, "endpoint", EP, ADD, { sleep });
    expect(r).toMatchObject({ written: true, attempts: 2, reads: 2, writes: 2 });
    expect(members(server)).toEqual([ERIN]);
  });

  it("when the read that would settle it fails too, the error says the write may have landed", async () => {
    const { server, client, sleep } = setup();
    server.put(EP, { version: 1, bindings: [] });
    server.policies.get(EP)!.etag = undefined;
    server.afterSet = () => LOST["500"]!();
    server.beforeGet = () => googleError(403, "PERMISSION_DENIED", "The caller does not have permission.");
    const initial = structuredClone(server.policies.get(EP)!);
    const e = await modifyPolicy(client, "endpoint", EP, ADD, { sleep, initial }).catch((x: unknown) => x);
    expect(isCloudError(e)).toBe(true);
    expect((e as { uncertain: boolean }).uncertain).toBe(true);
  });

  it("a refused write (403) is not uncertain: nothing was written", async () => {
    const { server, client, sleep } = setup();
    server.put(EP, { version: 1, bindings: [] });
    server.beforeSet = () => googleError(403, "PERMISSION_DENIED", "The caller does not have permission.");
    const e = await modifyPolicy(client, "endpoint", EP, ADD, { sleep }).catch((x: unknown) => x);
    expect(isCloudError(e, "PERMISSION_DENIED")).toBe(true);
    expect((e as { uncertain: boolean }).uncertain).toBe(false);
  });
});
