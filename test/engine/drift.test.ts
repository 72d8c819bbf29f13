// What a remediation plan targets (src/engine/drift.ts): the resources an apply restores, never a
// deleted principal's (its email may name another account by now) nor an unmanaged grant.
import { describe, expect, it } from "vitest";
import { remediatedAddresses } from "../../src/engine/drift.js";
import type { DriftFinding } from "../../src/plan/drift.js";

const f = (cls: DriftFinding["class"], address?: string, revokedByNextApply?: boolean): DriftFinding => ({
  class: cls,
  object: "projects/p/locations/l/restorePlans/r",
  kind: "restorePlan",
  role: "roles/gkebackup.viewer",
  member: "user:a@example.com",
  ...(address ? { address } : {}),
  ...(revokedByNextApply !== undefined ? { revokedByNextApply } : {}),
});

describe("remediatedAddresses", () => {
  it("targets removed, revoked-by-the-next-apply and condition drift, each resource once", () => {
    const findings = [
      f("removed", "viewers"),
      f("added", "viewers", true),
      f("added", "admins", false),
      f("condition", "frank"),
      f("deleted-principal", "erin"),
      f("unmanaged"),
    ];
    expect(remediatedAddresses(findings)).toEqual(["frank", "viewers"]);
  });
});
