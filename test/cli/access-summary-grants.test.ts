// The access summary names who gains as well as who loses (issue 38, item 3), bounded, and says
// of a principal computed from a secret that it is one.
import { describe, expect, it } from "vitest";
import type { AccessChange, Plan } from "../../src/generated/schemas.js";
import { accessSummaryLines } from "../../src/cli/render/access-summary.js";
import { toPlain } from "../../src/diagnostics/lines.js";

const OBJ = "projects/p/locations/l/restorePlans/r";
const change = (action: "grant" | "revoke", principal: string): AccessChange => ({
  object: OBJ,
  kind: "restorePlan",
  principal,
  role: "roles/gkebackup.viewer",
  action,
  addresses: ["viewers"],
});
const planOf = (changes: AccessChange[]) => ({ access_changes: { changes, incomplete: [] } }) as unknown as Plan;

describe("the access summary", () => {
  it("lists grants under the revocations", () => {
    const text = toPlain(
      accessSummaryLines(
        planOf([change("revoke", "user:carol@example.com"), change("grant", "user:alice@example.com")]),
      ),
    );
    expect(text).toBe(
      "Access: 1 granted, 1 revoked\n" +
        `  - user:carol@example.com loses roles/gkebackup.viewer on ${OBJ} (viewers)\n` +
        `  + user:alice@example.com gains roles/gkebackup.viewer on ${OBJ} (viewers)\n`,
    );
  });

  it("names twenty grants and counts the rest", () => {
    const text = toPlain(
      accessSummaryLines(planOf(Array.from({ length: 25 }, (_, i) => change("grant", `user:u${i}@example.com`)))),
    );
    expect(text).toContain("user:u19@example.com gains");
    expect(text).not.toContain("user:u20@example.com");
    expect(text).toContain("  + and 5 more granted (plan --view access lists them all)");
  });

  it("says a principal computed from a secret is one", () => {
    const text = toPlain(accessSummaryLines(planOf([change("grant", "user:(sensitive value)@example.com")])));
    expect(text).toContain(
      "  + user:(sensitive value)@example.com (a principal computed from a secret) gains roles/gkebackup.viewer",
    );
  });

  it("gives a public principal with a basic role one warning line, not two", () => {
    const g = { ...change("grant", "allUsers"), role: "roles/viewer" };
    const warnings = toPlain(accessSummaryLines(planOf([g])))
      .split("\n")
      .filter((l) => l.startsWith("  ! "));
    expect(warnings).toEqual([`  ! allUsers (public) gains the basic role roles/viewer on ${OBJ} (viewers)`]);
  });
});
