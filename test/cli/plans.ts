// Plans for the renderer tests, made by the real loader and planner over a fake CloudPort.
import type { Plan } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import {
  BINDING,
  EP,
  FED,
  LAKE,
  LAKE_INVOKER,
  MEMBER,
  RP,
  bindingState,
  fakeCloud,
  lakeVariable,
  makeState,
  memberState,
  planOptions,
  STACK_HEAD,
  stackOf,
} from "../fixtures/builders.js";

/** The quickstart's stack (three creates and a federation read) against its seed. */
export async function quickstartPlan(): Promise<Plan> {
  const text = `${STACK_HEAD}variables:
${lakeVariable()}resources:
  restoreViewers:
    type: ${BINDING}
    properties:
      name: ${RP}
      role: roles/gkebackup.viewer
      members: [group:sre@example.com, user:alice@example.com]
  restoreAdmins:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.admin
      members: [user:oncall@example.com]
      condition:
        title: until-2027
        description: Temporary on-call access
        expression: request.time < timestamp("2027-01-01T00:00:00Z")
${LAKE_INVOKER}    options:
      dependsOn: [restoreViewers]
outputs:
  lakeEndpoint: \${lake.endpointUri}
`;
  const cloud = fakeCloud({
    policies: {
      [RP]: {
        version: 1,
        etag: "E1",
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] }],
      },
      [EP]: {
        version: 1,
        etag: "E2",
        bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com"] }],
      },
    },
    federations: { [FED]: LAKE },
  });
  return (await plan(stackOf(text), undefined, cloud.port, planOptions())).plan;
}

/**
 * Every kind of change at once: drift (a member added out of band to `admins`, `invoker`
 * deleted out of band), an in-place members update (`viewers`), a replacement on a role change
 * (`admins`), a re-create (`invoker`) and a delete (`gone`).
 */
export async function mixedPlan(): Promise<Plan> {
  const text = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:keep@x.com, user:new@x.com] }
  admins:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.admin, members: [user:a@x.com] }
  invoker:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: user:dana@x.com }
`;
  const state = makeState("t", [
    bindingState(
      "viewers",
      { name: RP, role: "roles/gkebackup.viewer", members: ["user:keep@x.com", "user:old@x.com"] },
      "E1",
    ),
    bindingState("admins", { name: RP, role: "roles/gkebackup.backupAdmin", members: ["user:a@x.com"] }, "E1"),
    memberState("invoker", { name: EP, role: "roles/aiplatform.user", member: "user:dana@x.com" }, "E2"),
    bindingState("gone", { name: RP, role: "roles/gkebackup.restoreUser", members: ["user:z@x.com"] }, "E1"),
  ]);
  const cloud = fakeCloud({
    policies: {
      [RP]: {
        etag: "E1",
        bindings: [
          { role: "roles/gkebackup.viewer", members: ["user:keep@x.com", "user:old@x.com"] },
          { role: "roles/gkebackup.backupAdmin", members: ["user:a@x.com", "user:b@x.com"] },
          { role: "roles/gkebackup.restoreUser", members: ["user:z@x.com"] },
        ],
      },
      [EP]: { etag: "E2", bindings: [] },
    },
    federations: { [FED]: LAKE },
  });
  return (await plan(stackOf(text), state, cloud.port, planOptions())).plan;
}

/** A stack in sync with its state and the live policies. */
export async function noChangesPlan(): Promise<Plan> {
  const text = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:keep@x.com] }
`;
  const state = makeState("t", [
    bindingState("viewers", { name: RP, role: "roles/gkebackup.viewer", members: ["user:keep@x.com"] }, "E1"),
  ]);
  const cloud = fakeCloud({
    policies: { [RP]: { etag: "E1", bindings: [{ role: "roles/gkebackup.viewer", members: ["user:keep@x.com"] }] } },
  });
  return (await plan(stackOf(text), state, cloud.port, planOptions())).plan;
}

/** A create whose member depends on a deferred read. */
export async function deferredReadPlan(): Promise<Plan> {
  const text =
    `${STACK_HEAD}variables:
${lakeVariable('"lake-${viewers.etag}"')}resources:
  viewers:
    type: ` +
    `${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:keep@x.com] }
  ` +
    `invoker:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: ` +
    `"serviceAccount:\${lake.labels.owner}@p.iam.gserviceaccount.com" }
`;
  const cloud = fakeCloud({ policies: { [RP]: { etag: "E1" }, [EP]: { etag: "E2" } } });
  return (await plan(stackOf(text), undefined, cloud.port, planOptions())).plan;
}
