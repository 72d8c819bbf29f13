// Claim conflicts of one cause are one error (issue 38, item 2): eight of this stack's resources
// claiming grants another stack manages are one error listing them, not eight errors.
import { describe, expect, it } from "vitest";
import { type ClaimConflict, claimConflictError } from "../../src/claims/claims.js";

const conflict = (i: number, stack = "owner", pending = false): ClaimConflict => ({
  kind: "member",
  mine: {
    address: `mine${i}`,
    claim: {
      scope: "member",
      kind: "restorePlan",
      object: `projects/p/locations/l/restorePlans/r${i}`,
      role: "roles/viewer",
      member: `user:u${i}@example.com`,
    },
  },
  owner: {
    stack,
    workspace: "default",
    address: `theirs${i}`,
    claim: {
      scope: "member",
      kind: "restorePlan",
      object: `projects/p/locations/l/restorePlans/r${i}`,
      role: "roles/viewer",
      member: `user:u${i}@example.com`,
    },
    ...(pending ? { pending: true } : {}),
  },
});

describe("claim conflicts", () => {
  it("of one owner are one error listing them (ten named, the rest counted)", () => {
    const conflicts = Array.from({ length: 12 }, (_, i) => conflict(i));
    const d = claimConflictError(conflicts, "stack.yaml").diagnostics;
    expect(d).toHaveLength(1);
    expect(d[0]!.summary).toBe('12 resources claim grants that stack "owner" workspace "default" manages');
    expect(d[0]!.code).toBe("state/claim-conflict");
    expect(d[0]!.address).toBe("mine0");
    expect(d[0]!.detail).toContain(
      '  - resource "mine9" claims member user:u9@example.com of role roles/viewer on ' +
        'projects/p/locations/l/restorePlans/r9 (their resource "theirs9")',
    );
    expect(d[0]!.detail).not.toContain('"mine10"');
    expect(d[0]!.detail).toContain("  and 2 more");
  });

  it("of several owners are one error each; a single conflict keeps its own message", () => {
    const d = claimConflictError(
      [conflict(0), conflict(1, "other"), conflict(2), conflict(3, "owner", true)],
      "stack.yaml",
    ).diagnostics;
    expect(d.map((x) => x.summary)).toEqual([
      '2 resources claim grants that stack "owner" workspace "default" manages',
      expect.stringContaining('resource "mine1" claims member user:u1@example.com'),
      expect.stringContaining('which stack "owner" workspace "default" is applying now'),
    ]);
  });
});
