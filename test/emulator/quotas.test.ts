import { describe, expect, it } from "vitest";
import { faultProblem, Faults } from "../../src/emulator/faults.js";
import { Quotas } from "../../src/emulator/quotas.js";

describe("emulator quotas", () => {
  it("allows a second's worth at once, then N per minute, per (service, project)", () => {
    let t = 0;
    const q = new Quotas({ gkebackup: 600 }, () => t);
    for (let i = 0; i < 10; i++) expect(q.charge("gkebackup", "p")).toBeUndefined();
    const e = q.charge("gkebackup", "p")!;
    expect(e.status).toBe("RESOURCE_EXHAUSTED");
    expect(e.httpStatus).toBe(429);
    expect(e.headers["Retry-After"]).toBe("1");
    expect(JSON.stringify(e.toJSON())).toContain('"retryDelay":"1s"');
    expect(e.reason).toBe("RATE_LIMIT_EXCEEDED");
    // Another project, or a service without a quota, is not charged to it.
    expect(q.charge("gkebackup", "other")).toBeUndefined();
    expect(q.charge("aiplatform", "p")).toBeUndefined();
    t = 100;
    expect(q.charge("gkebackup", "p")).toBeUndefined();
    expect(q.charge("gkebackup", "p")).toBeDefined();
  });

  it("says how long to wait at a slow quota", () => {
    let t = 0;
    const q = new Quotas({ metastore: 6 }, () => t);
    expect(q.charge("metastore", "p")).toBeUndefined();
    expect(q.charge("metastore", "p")!.headers["Retry-After"]).toBe("10");
    t = 4_000;
    expect(q.charge("metastore", "p")!.headers["Retry-After"]).toBe("6");
  });

  it("limits a service's writes apart with service.write", () => {
    const q = new Quotas({ "gkebackup.write": 60 }, () => 0);
    expect(q.charge("gkebackup", "p", true)).toBeUndefined();
    const e = q.charge("gkebackup", "p", true)!;
    expect(e.metadata).toMatchObject({
      service: "gkebackup.googleapis.com",
      quota_limit: "WriteRequestsPerMinutePerProject",
    });
    for (let i = 0; i < 5; i++) expect(q.charge("gkebackup", "p", false)).toBeUndefined();
    expect(faultProblem({ quotas: { "gkebackup.write": 600 } })).toBeUndefined();
  });

  it("is part of the fault configuration, checked", () => {
    expect(faultProblem({ quotas: { gkebackup: 600 } })).toBeUndefined();
    expect(faultProblem({ quotas: { storage: 600 } })).toMatch(/unknown service "storage"/);
    expect(faultProblem({ quotas: { gkebackup: 0 } })).toMatch(/between 1 and 1000000/);
    expect(faultProblem({ quotas: [] })).toMatch(/must be an object/);
    const f = new Faults();
    f.set({ quotas: { aiplatform: 60 } });
    expect(f.quota("aiplatform", "p", false)).toBeUndefined();
    expect(f.quota("aiplatform", "p", false)).toBeDefined();
    f.clear();
    expect(f.quota("aiplatform", "p", false)).toBeUndefined();
  });
});
