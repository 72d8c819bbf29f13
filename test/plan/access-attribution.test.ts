// Each access change names the resources that cause it, and only those: a member resource its own
// member, a binding resource every grant and revocation of its role and condition, a policy
// resource every change on its object. Two member resources on one role each cause only their own
// grant (the hostile tester's f2/s2.yaml listed q1's grant as "(a, b)").
import { describe, expect, it } from "vitest";
import type { AccessChange, Plan } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { accessLines } from "../../src/cli/render/access-text.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { planMarkdown } from "../../src/cli/render/markdown.js";
import {
  EP,
  MEMBER,
  RP,
  fakeCloud,
  makeState,
  memberState,
  planOptions,
  rpName,
  STACK_HEAD,
  stackOf,
} from "../fixtures/builders.js";

const RP_POLICY = "cloudnative:backup/v1:RestorePlanIamPolicy";
const RP_BINDING = "cloudnative:backup/v1:RestorePlanIamBinding";
const WEEKLY = rpName("weekly");

async function attributionPlan(): Promise<Plan> {
  const text = `${STACK_HEAD}resources:
  a:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:q1@example.com" }
  b:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:q2@example.com" }
  moved:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:new@example.com" }
  viewers:
    type: ${RP_BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: ["user:v1@example.com", "user:v2@example.com"] }
  whole:
    type: ${RP_POLICY}
    properties: { name: weekly, bindings: [{ role: roles/gkebackup.admin, members: ["user:w1@example.com"] }] }
`;
  const state = makeState("t", [
    memberState("moved", { name: EP, role: "roles/aiplatform.viewer", member: "user:old@example.com" }, "E2"),
    memberState("gone", { name: EP, role: "roles/aiplatform.viewer", member: "user:gone@example.com" }, "E2"),
  ]);
  const cloud = fakeCloud({
    policies: {
      [EP]: {
        version: 1,
        etag: "E2",
        bindings: [
          {
            role: "roles/aiplatform.viewer",
            members: ["user:old@example.com", "user:gone@example.com", "user:kept@example.com"],
          },
        ],
      },
      [RP]: {
        version: 1,
        etag: "E1",
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:v1@example.com", "user:carol@example.com"] }],
      },
      [WEEKLY]: {
        version: 1,
        etag: "E3",
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:x@example.com"] }],
      },
    },
  });
  return (await plan(stackOf(text), state, cloud.port, planOptions())).plan;
}

const row = (c: AccessChange) =>
  `${c.action} ${c.principal} ${c.role} ${c.object.split("/").pop()}: ${c.addresses.join(", ")}`;

describe("who causes each access change", () => {
  it("each member resource its own member, a binding resource its role, a policy resource its object", async () => {
    const p = await attributionPlan();
    expect((p.access_changes?.changes ?? []).map(row).sort()).toEqual(
      [
        "grant user:q1@example.com roles/aiplatform.viewer churn: a",
        "grant user:q2@example.com roles/aiplatform.viewer churn: b",
        "grant user:new@example.com roles/aiplatform.viewer churn: moved",
        "revoke user:old@example.com roles/aiplatform.viewer churn: moved",
        "revoke user:gone@example.com roles/aiplatform.viewer churn: gone",
        "grant user:v2@example.com roles/gkebackup.viewer nightly: viewers",
        "revoke user:carol@example.com roles/gkebackup.viewer nightly: viewers",
        "grant user:w1@example.com roles/gkebackup.admin weekly: whole",
        "revoke user:x@example.com roles/gkebackup.viewer weekly: whole",
      ].sort(),
    );
  });

  it("the access view and Markdown say the same", async () => {
    const p = await attributionPlan();
    const view = toPlain(accessLines(p.access_changes));
    expect(view).toMatch(/\+ user:q1@example\.com +roles\/aiplatform\.viewer {2}\(a\)\n/);
    expect(view).toMatch(/\+ user:q2@example\.com +roles\/aiplatform\.viewer {2}\(b\)\n/);
    expect(view).toMatch(/- user:gone@example\.com +roles\/aiplatform\.viewer {2}\(gone\)\n/);
    const md = planMarkdown(p, []);
    expect(md).toContain(
      "| ➕ grant | `user:q1@example.com` | `roles/aiplatform.viewer` |  | " +
        "`projects/my-project/locations/us-central1/endpoints/churn` | `a` |",
    );
    expect(md).toContain(
      "| ➕ grant | `user:q2@example.com` | `roles/aiplatform.viewer` |  | " +
        "`projects/my-project/locations/us-central1/endpoints/churn` | `b` |",
    );
  });
});
