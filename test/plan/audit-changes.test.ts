// Audit logging a plan turns off (or on) is data in the plan, like grants: a whole-policy
// resource created over an object with live audit logging, or destroyed after someone turned
// logging on out of band, removes it. The plan's access delta lists it (`audit_changes`, for
// machine review), the access summary says it, and the resource's block shows it where its own
// diff cannot (the hostile tester saw only `+ auditConfigs = [ ]`, or nothing at all).
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { planLines } from "../../src/cli/render/plan-text.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { RP, fakeCloud, makeState, planOptions, STACK_HEAD, stackOf } from "../fixtures/builders.js";

const RP_POLICY = "cloudnative:backup/v1:RestorePlanIamPolicy";
const LIVE_AUDIT = [
  {
    service: "allServices",
    auditLogConfigs: [{ logType: "DATA_READ" as const, exemptedMembers: ["user:carol@example.com"] }],
  },
];
const VIEWERS = [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] }];

const stack = (audit = "") => `${STACK_HEAD}resources:
  pol:
    type: ${RP_POLICY}
    properties:
      name: nightly
      bindings: [{ role: roles/gkebackup.viewer, members: ["user:carol@example.com"] }]
${audit}`;

async function planOver(text: string, live: object, state = makeState("t", [])): Promise<Plan> {
  const cloud = fakeCloud({ policies: { [RP]: { version: 1, etag: "E1", ...live } } });
  return (await plan(stackOf(text), state, cloud.port, planOptions())).plan;
}

describe("audit logging in the plan", () => {
  it(
    "a policy resource created over live audit logging: listed as " + "removed, in the summary and in its block",
    async () => {
      const p = await planOver(stack(), { bindings: VIEWERS, auditConfigs: LIVE_AUDIT });
      expect(p.access_changes?.audit_changes).toEqual([
        {
          object: RP,
          kind: "restorePlan",
          service: "allServices",
          log_type: "DATA_READ",
          exempted_members: ["user:carol@example.com"],
          action: "remove",
          addresses: ["pol"],
        },
      ]);
      const text = toPlain(planLines(p));
      expect(text).toContain("Audit logging: 0 turned on, 1 turned off");
      expect(text).toContain(
        `- DATA_READ audit logging of allServices (exempting user:carol@example.com) is turned off on ${RP} (pol)`,
      );
      expect(text).toMatch(
        new RegExp(
          String.raw`- auditConfigs: allServices DATA_READ \(exempting user:carol@example.com\) +# configured o` +
            String.raw`utside converge, will be removed`,
        ),
      );
    },
  );

  it("audit logging the stack adds is listed as turned on; none at all: no audit line", async () => {
    const added = await planOver(
      stack("      auditConfigs: [{ service: allServices, auditLogConfigs: [{ logType: ADMIN_READ }] }]\n"),
      { bindings: VIEWERS },
    );
    expect(added.access_changes?.audit_changes?.map((a) => `${a.action} ${a.service} ${a.log_type}`)).toEqual([
      "add allServices ADMIN_READ",
    ]);
    expect(toPlain(planLines(added))).toContain("Audit logging: 1 turned on, 0 turned off");
    const none = await planOver(stack(), { bindings: VIEWERS });
    expect(none.access_changes?.audit_changes ?? []).toEqual([]);
    expect(toPlain(planLines(none))).not.toContain("Audit logging");
  });
});
