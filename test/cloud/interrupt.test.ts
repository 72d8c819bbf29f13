// Ctrl-C in the cloud layer (issue 11, item 5): once a call's signal aborts, nothing more is sent:
// no first request, no transient retry, no etag-conflict round, and no write after a completed
// read. A write already sent finishes; a read already sent is abandoned.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { CloudError } from "../../src/cloud/errors.js";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import { defaultSleep } from "../../src/cloud/retry.js";
import { FakePolicyServer, fakeFetch, googleError, json, type Reply } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const ROLE = "roles/gkebackup.viewer";
const OK = json(200, { version: 1, bindings: [], etag: "ACAB" });
const ADD = [{ kind: "addMember" as const, role: ROLE, member: "user:dave@example.com" }];

function client(
  handler: (signal: AbortSignal | undefined) => Reply | Promise<Reply>,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = async () => {},
) {
  const f = fakeFetch((_r, signal) => handler(signal));
  return {
    f,
    c: new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: f, retry: { sleep, random: () => 0.5 } }),
  };
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail("expected a rejection"),
    (e: unknown) => e as CloudError,
  );

describe("transport: after an abort", () => {
  it("sends nothing: the call rejects with CANCELLED", async () => {
    const { c, f } = client(() => OK);
    const controller = new AbortController();
    controller.abort();
    for (const call of [
      c.getIamPolicy("restorePlan", RP, { signal: controller.signal }),
      c.setIamPolicy("restorePlan", RP, {}, { signal: controller.signal }),
    ]) {
      const e = await rejection(call);
      expect(e).toBeInstanceOf(CloudError);
      expect(e).toMatchObject({ status: "CANCELLED", retryable: false, resource: RP });
      expect(e.message).toContain("interrupted: not sent");
    }
    expect(f.calls).toHaveLength(0);
  });

  it("ends a retry wait at once and sends no retry", async () => {
    const controller = new AbortController();
    // A wait that never ends by itself: only the abort can end it.
    const sleep = () => {
      setTimeout(() => controller.abort(), 5);
      return new Promise<void>(() => {});
    };
    const { c, f } = client(() => googleError(503, "UNAVAILABLE", "try later"), sleep);
    const e = await rejection(c.setIamPolicy("restorePlan", RP, {}, { signal: controller.signal }));
    expect(e).toMatchObject({ status: "CANCELLED" });
    expect(e.message).toContain("not retried after 1 attempts (last: UNAVAILABLE)");
    expect(f.calls).toHaveLength(1);
  });

  it("lets a write in flight finish: its outcome must be known", async () => {
    const controller = new AbortController();
    let httpAborted: boolean | undefined;
    const { c } = client(async (signal) => {
      controller.abort();
      await new Promise((r) => setTimeout(r, 10));
      httpAborted = signal?.aborted;
      return OK;
    });
    await expect(c.setIamPolicy("restorePlan", RP, {}, { signal: controller.signal })).resolves.toMatchObject({
      etag: "ACAB",
    });
    expect(httpAborted).toBe(false);
  });

  it("abandons a read in flight", async () => {
    const controller = new AbortController();
    const { c } = client(
      (signal) =>
        new Promise<Reply>((_resolve, reject) => {
          signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
          controller.abort();
        }),
    );
    const e = await rejection(c.getIamPolicy("restorePlan", RP, { signal: controller.signal }));
    expect(e).toMatchObject({ status: "CANCELLED" });
    expect(e.message).toContain("abandoned in flight");
  });

  it("the default sleep ends at the abort", async () => {
    const controller = new AbortController();
    const t0 = Date.now();
    setTimeout(() => controller.abort(), 10);
    await defaultSleep(60_000, controller.signal);
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});

describe("policy engine: after an abort", () => {
  function setup() {
    const server = new FakePolicyServer();
    server.put(RP, { version: 1, bindings: [] });
    const c = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: server.fetch });
    return { server, c, controller: new AbortController() };
  }

  it("does not write a policy whose read completed after the abort", async () => {
    const { server, c, controller } = setup();
    server.beforeGet = () => void controller.abort(); // the read is in flight; it still answers
    const e = await rejection(modifyPolicy(c, "restorePlan", RP, ADD, { signal: controller.signal }));
    expect(e).toMatchObject({
      status: "CANCELLED",
      operation: "setIamPolicy",
      methodId: "gkebackup.projects.locations.restorePlans.setIamPolicy",
    });
    expect(e.message).toContain("not sent after 1 reads and 0 writes (nothing was written)");
    expect([server.gets, server.sets]).toEqual([1, 0]);
  });

  it("starts no new round after an etag conflict", async () => {
    const { server, c, controller } = setup();
    server.beforeSet = (name) => {
      server.mutate(name, (p) => p.bindings!.push({ role: "roles/owner", members: ["user:other@example.com"] }));
      controller.abort();
    };
    const e = await rejection(
      modifyPolicy(c, "restorePlan", RP, ADD, {
        signal: controller.signal,
        sleep: (ms, signal) => defaultSleep(ms * 1000, signal),
      }),
    );
    expect(e).toMatchObject({ status: "CANCELLED", operation: "getIamPolicy" });
    expect(e.cause).toMatchObject({ status: "ABORTED" });
    expect([server.gets, server.sets]).toEqual([1, 1]);
  });

  it("does not write from an initial policy once aborted", async () => {
    const { server, c, controller } = setup();
    controller.abort();
    await expect(
      modifyPolicy(c, "restorePlan", RP, ADD, { initial: server.policies.get(RP)!, signal: controller.signal }),
    ).rejects.toMatchObject({ status: "CANCELLED" });
    expect([server.gets, server.sets]).toEqual([0, 0]);
  });
});
