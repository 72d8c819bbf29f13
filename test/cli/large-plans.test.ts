// Rendering a plan of 100,000 resources: `plan --destroy` of the bench's 100,000-resource stack
// crashed with "Maximum call stack size exceeded" (its access summary's 110,000 lines were spread
// into one push), and the access view grouped its changes by object with a scan of every change
// per object (12,000 objects × 110,000 changes: half a minute).
import { describe, expect, it } from "vitest";
import { accessLines } from "../../src/cli/render/access-text.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { planLineStream } from "../../src/cli/render/plan-text.js";
import type { AccessChange } from "../../src/generated/schemas.js";
import { quickstartPlan } from "./plans.js";

const N = 150_000;
const object = (i: number) => `projects/p/locations/us-central1/restorePlans/rp-${i}`;
const revoke = (i: number, objects: number): AccessChange => ({
  object: object(i % objects),
  kind: "restorePlan",
  principal: `user:u${i}@example.com`,
  role: "roles/gkebackup.viewer",
  action: "revoke",
  addresses: [`r${i}`],
});

describe("a plan of more than 100,000 access changes", () => {
  it("renders, every revocation listed in the summary", async () => {
    const plan = await quickstartPlan();
    plan.access_changes = { changes: Array.from({ length: N }, (_, i) => revoke(i, 12_000)), incomplete: [] };
    let losses = 0;
    let last = "";
    for (const line of planLineStream(plan)) {
      last = toPlain([line]);
      if (last.includes(" loses roles/gkebackup.viewer on ")) losses++;
    }
    expect(losses).toBe(N);
    expect(last).toBe(
      `  - user:u${N - 1}@example.com loses roles/gkebackup.viewer on ${object((N - 1) % 12_000)} (r${N - 1})\n`,
    );
  });

  it("is grouped by object in the access view, in the order the objects first appear", () => {
    const changes = Array.from({ length: N }, (_, i) => revoke(i, N));
    const lines = toPlain(accessLines({ changes, incomplete: [] })).split("\n");
    expect(lines[0]).toBe(`Access changes (0 granted, ${N} revoked):`);
    expect(lines.slice(1, 7)).toEqual([
      "",
      `  ${object(0)}`,
      "    - user:u0@example.com  roles/gkebackup.viewer  (r0)",
      "",
      `  ${object(1)}`,
      "    - user:u1@example.com  roles/gkebackup.viewer  (r1)",
    ]);
    expect(lines.filter((l) => l.startsWith("    - ")).length).toBe(N);
  });
});
