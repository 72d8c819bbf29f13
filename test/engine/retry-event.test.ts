import { describe, expect, it } from "vitest";
import { retryEvent } from "../../src/connect/cloud.js";
import { RetryTally, retryText } from "../../src/cli/render/retry-text.js";

const RP = "projects/p/locations/us-central1/restorePlans/a";

describe("cloud events as engine retry events", () => {
  it("an attempt that will be retried is a transient retry, named by its short call", () => {
    const e = retryEvent({
      type: "attempt",
      methodId: "gkebackup.projects.locations.restorePlans.getIamPolicy",
      resource: RP,
      attempt: 2,
      maxAttempts: 10,
      status: "UNAVAILABLE",
      httpStatus: 503,
      ms: 4,
      retry: true,
      delayMs: 412.7,
    });
    expect(e).toEqual({
      type: "retry",
      resource: RP,
      call: "getIamPolicy",
      status: "UNAVAILABLE",
      httpStatus: 503,
      attempt: 2,
      maxAttempts: 10,
      delayMs: 413,
      reason: "transient",
    });
    expect(retryText(e as never)).toBe(
      `${RP}: getIamPolicy failed with UNAVAILABLE (HTTP 503); retrying in 0.4s (attempt 3 of 10)`,
    );
  });

  it("successes, final failures and unchanged or written rounds are not retries", () => {
    const base = {
      type: "attempt",
      methodId: "x.setIamPolicy",
      resource: RP,
      attempt: 1,
      maxAttempts: 10,
      httpStatus: 200,
      ms: 1,
    } as const;
    expect(retryEvent({ ...base, status: "OK", retry: false })).toBeUndefined();
    expect(retryEvent({ ...base, status: "PERMISSION_DENIED", httpStatus: 403, retry: false })).toBeUndefined();
    expect(
      retryEvent({ type: "policy", kind: "endpoint", resource: RP, round: 1, maxRounds: 12, outcome: "written" }),
    ).toBeUndefined();
    // The last aborted round has no delay: it is a failure, reported as an error, not a retry.
    expect(
      retryEvent({ type: "policy", kind: "endpoint", resource: RP, round: 12, maxRounds: 12, outcome: "aborted" }),
    ).toBeUndefined();
  });

  it("an aborted read-modify-write round is an etag-conflict retry", () => {
    const e = retryEvent({
      type: "policy",
      kind: "restorePlan",
      resource: RP,
      round: 1,
      maxRounds: 12,
      outcome: "aborted",
      delayMs: 25,
    });
    expect(e).toMatchObject({
      type: "retry",
      call: "setIamPolicy",
      status: "ABORTED",
      reason: "etag-conflict",
      attempt: 1,
      maxAttempts: 12,
      delayMs: 25,
    });
    expect(retryText(e as never)).toBe(
      `${RP}: another writer changed the policy (etag conflict); reading it ` +
        `again and re-applying in 0.0s (round 2 of 12)`,
    );
  });
});

describe("retry tally", () => {
  it("counts by cause, most frequent first, and says nothing without retries", () => {
    const t = new RetryTally();
    expect(t.lines()).toEqual([]);
    const r = (status: string, reason: "transient" | "etag-conflict" = "transient") =>
      ({
        type: "retry",
        resource: RP,
        call: "getIamPolicy",
        status,
        attempt: 1,
        maxAttempts: 10,
        delayMs: 1,
        reason,
      }) as const;
    t.add(r("ABORTED", "etag-conflict"));
    t.add(r("UNAVAILABLE"));
    t.add(r("UNAVAILABLE"));
    expect(t.counts()).toEqual({ UNAVAILABLE: 2, "etag conflict": 1 });
    expect(t.lines().map((l) => l.map((s) => s.text).join(""))).toEqual([
      "Retried 3 times: 2 × UNAVAILABLE, 1 × etag conflict.",
    ]);
  });
});
