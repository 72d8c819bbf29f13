// The typed client against the real emulator: the five operations, errors, auth and retries.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { CloudError } from "../../src/cloud/errors.js";
import type { AttemptEvent, CloudEvent } from "../../src/cloud/cloud-events.js";
import {
  AUDIT,
  EP,
  FED,
  LOCKED_RP,
  PROJECT,
  ROLE,
  RP,
  RP2,
  UNTIL_2027,
  emulatorClient,
  setFaults,
  stats,
  useResetEmulator,
} from "./emulator-helpers.js";
import { GET_EP, GET_FED, GET_RP, SET_EP, SET_RP } from "../support/emulator.js";

const emu = useResetEmulator();

describe("CloudClient against the emulator", () => {
  it("restore plan: getIamPolicy (v3, conditions and auditConfigs) and setIamPolicy with the etag", async () => {
    const c = emulatorClient(emu.hostPort);
    const p = await c.getIamPolicy("restorePlan", RP);
    expect(p.version).toBe(3);
    expect(p.auditConfigs).toEqual(AUDIT);
    expect(p.bindings).toContainEqual({ role: ROLE, members: ["group:sre@example.com"], condition: UNTIL_2027 });
    expect(typeof p.etag).toBe("string");
    expect(Buffer.from(p.etag!, "base64").toString("base64")).toBe(p.etag);

    const written = await c.setIamPolicy("restorePlan", RP, {
      ...p,
      bindings: [...p.bindings!, { role: "roles/gkebackup.admin", members: ["user:new@example.com"] }],
    });
    expect(written.etag).not.toBe(p.etag);
    expect(written.bindings).toContainEqual({ role: "roles/gkebackup.admin", members: ["user:new@example.com"] });
    expect(written.auditConfigs).toEqual(AUDIT);
    expect(await c.getIamPolicy("restorePlan", RP)).toEqual(written);
  });

  it("endpoint: POST getIamPolicy with an empty body, and setIamPolicy", async () => {
    const c = emulatorClient(emu.hostPort);
    const p = await c.getIamPolicy("endpoint", EP);
    expect(p.bindings).toHaveLength(2);
    const w = await c.setIamPolicy("endpoint", EP, {
      ...p,
      bindings: [{ role: "roles/aiplatform.user", members: ["user:solo@example.com"] }],
    });
    expect(w.bindings).toEqual([{ role: "roles/aiplatform.user", members: ["user:solo@example.com"] }]);
    expect(w.auditConfigs).toBeUndefined();
  });

  it("getFederation returns the wire shape", async () => {
    const c = emulatorClient(emu.hostPort);
    const f = await c.getFederation(FED);
    // Like Google, the emulator may answer with the project number in the name.
    expect(f.name).toMatch(/^projects\/(my-project|123456789012)\/locations\/us-central1\/federations\/lake$/);
    expect(f).toMatchObject({
      version: "3.1.2",
      state: "ACTIVE",
      labels: { owner: "data-eng" },
      endpointUri: "thrift://10.0.0.7:9083",
      backendMetastores: {
        "1": { name: `projects/${PROJECT}/locations/us-central1/services/hive`, metastoreType: "DATAPROC_METASTORE" },
      },
    });
    expect(f.createTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(typeof f.uid).toBe("string");
  });

  it("the stats count exactly the calls made, by discovery method id", async () => {
    const c = emulatorClient(emu.hostPort);
    const before = await stats(emu.url);
    await c.getIamPolicy("restorePlan", RP2);
    const p = await c.getIamPolicy("endpoint", EP);
    await c.setIamPolicy("endpoint", EP, p);
    await c.getFederation(FED);
    await c.getFederation(FED);
    const after = await stats(emu.url);
    const delta = (m: string) => (after.requests[m] ?? 0) - (before.requests[m] ?? 0);
    expect([GET_RP, SET_RP, GET_EP, SET_EP, GET_FED].map(delta)).toEqual([1, 0, 1, 1, 2]);
  });

  it("an explicit http endpoint works as well as CLOUDNATIVE_EMULATOR_HOST", async () => {
    const c = new CloudClient({ endpoint: emu.url, env: {} });
    expect((await c.getFederation(FED)).name).toMatch(/\/federations\/lake$/);
  });

  it("NOT_FOUND is reported at once with the resource's address", async () => {
    const events: CloudEvent[] = [];
    const c = emulatorClient(emu.hostPort, { onEvent: (e) => events.push(e) });
    const missing = `projects/${PROJECT}/locations/us-central1/restorePlans/nope`;
    const err = (await c.getIamPolicy("restorePlan", missing).catch((e: unknown) => e)) as CloudError;
    expect(err).toBeInstanceOf(CloudError);
    expect(err).toMatchObject({
      status: "NOT_FOUND",
      httpStatus: 404,
      attempts: 1,
      resource: missing,
      methodId: GET_RP,
    });
    expect(err.message).toMatch(new RegExp(`^getIamPolicy ${missing}: NOT_FOUND \\(404\\): `));
    expect(events).toHaveLength(1);
  });

  it("INVALID_ARGUMENT (conditions need version 3) is not retried", async () => {
    const c = emulatorClient(emu.hostPort);
    const p = await c.getIamPolicy("restorePlan", RP2);
    const err = (await c
      .setIamPolicy("restorePlan", RP2, {
        ...p,
        version: 1,
        bindings: [{ role: ROLE, members: ["user:a@example.com"], condition: UNTIL_2027 }],
      })
      .catch((e: unknown) => e)) as CloudError;
    expect(err).toMatchObject({ status: "INVALID_ARGUMENT", httpStatus: 400, attempts: 1 });
  });

  it("a stale etag is 409 ABORTED (the transport leaves it to the policy engine)", async () => {
    const c = emulatorClient(emu.hostPort);
    const p = await c.getIamPolicy("restorePlan", RP2);
    await c.setIamPolicy("restorePlan", RP2, { ...p, bindings: [{ role: ROLE, members: ["user:a@example.com"] }] });
    const err = (await c
      .setIamPolicy("restorePlan", RP2, { ...p, bindings: [{ role: ROLE, members: ["user:b@example.com"] }] })
      .catch((e: unknown) => e)) as CloudError;
    expect(err).toMatchObject({ status: "ABORTED", httpStatus: 409, attempts: 1 });
  });

  it("callers: token from the environment, PERMISSION_DENIED and UNAUTHENTICATED; no token in messages", async () => {
    const admin_ = emulatorClient(emu.hostPort, { token: "admin-token" });
    expect((await admin_.getIamPolicy("restorePlan", LOCKED_RP)).bindings).toHaveLength(1);

    const viewer = emulatorClient(emu.hostPort, { token: "viewer-token" });
    const denied = (await viewer.getIamPolicy("restorePlan", LOCKED_RP).catch((e: unknown) => e)) as CloudError;
    expect(denied).toMatchObject({ status: "PERMISSION_DENIED", httpStatus: 403, attempts: 1 });
    expect(denied.message).toContain(LOCKED_RP);
    expect(denied.message).not.toContain("viewer-token");

    const anonymous = emulatorClient(emu.hostPort);
    await expect(anonymous.getIamPolicy("restorePlan", LOCKED_RP)).rejects.toMatchObject({
      status: "UNAUTHENTICATED",
      httpStatus: 401,
      attempts: 1,
    });
  });
});

describe("retries against injected faults", () => {
  it("with 30% UNAVAILABLE (seeded) every call still succeeds, and retries happened", async () => {
    const before = await stats(emu.url);
    await setFaults(emu.url, { errorRates: { UNAVAILABLE: 0.3 }, seed: 1 });
    const events: CloudEvent[] = [];
    const c = emulatorClient(emu.hostPort, {
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      onEvent: (e) => events.push(e),
    });
    for (let i = 0; i < 20; i++) {
      await c.getIamPolicy("restorePlan", RP);
      await c.getIamPolicy("endpoint", EP);
      await c.getFederation(FED);
    }
    const retried = events.filter((e): e is AttemptEvent => e.type === "attempt" && e.status === "UNAVAILABLE");
    expect(retried.length).toBeGreaterThan(5);
    expect(retried.every((e) => e.retry && e.httpStatus === 503)).toBe(true);
    const after = await stats(emu.url);
    const count = (s: typeof after) => Object.values(s.responses).reduce((n, r) => n + (r.UNAVAILABLE ?? 0), 0);
    const unavailable = count(after) - count(before);
    expect(unavailable).toBe(retried.length);
  });

  it("with 100% UNAVAILABLE it fails after its bounded attempts, saying what was tried", async () => {
    await setFaults(emu.url, { errorRates: { UNAVAILABLE: 1 }, seed: 1 });
    const before = await stats(emu.url);
    const c = emulatorClient(emu.hostPort, { retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 4 } });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(err).toBeInstanceOf(CloudError);
    expect(err).toMatchObject({
      status: "UNAVAILABLE",
      httpStatus: 503,
      attempts: 4,
      retryable: true,
      methodId: GET_RP,
      resource: RP,
    });
    expect(err.message).toMatch(
      new RegExp(`^getIamPolicy ${RP} failed after 4 attempts over \\d+\\.\\ds: UNAVAILABLE \\(503\\): .+`),
    );
    const after = await stats(emu.url);
    expect((after.requests[GET_RP] ?? 0) - (before.requests[GET_RP] ?? 0)).toBe(4);
  });

  it("honours the emulator's Retry-After", async () => {
    await setFaults(emu.url, { errorRates: { RESOURCE_EXHAUSTED: 1 }, retryAfterSeconds: 7, seed: 3 });
    const delays: number[] = [];
    const c = emulatorClient(emu.hostPort, { retry: { maxAttempts: 3, sleep: async (ms) => void delays.push(ms) } });
    await expect(c.getFederation(FED)).rejects.toMatchObject({
      status: "RESOURCE_EXHAUSTED",
      httpStatus: 429,
      attempts: 3,
    });
    expect(delays).toEqual([7000, 7000]);
  });
});
