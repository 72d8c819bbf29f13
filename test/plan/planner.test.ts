// The planner's decisions, through the real loader and planner with a fake CloudPort made of
// plain functions (no emulator): create, no-op, update, replace, delete, protect, --target,
// refresh=false, deferred reads, drift, imports, outputs and case-insensitive members.
import { describe, expect, it } from "vitest";
import type { Plan, Policy, ResourceChange, State } from "../../src/generated/schemas.js";
import type { PlanOptions } from "../../src/plan/context.js";
import { displayAction, planCounts } from "../../src/contracts/actions.js";
import { plan } from "../../src/plan/planner.js";
import { validate } from "../../src/schemas/index.js";
import { CloudError } from "../../src/cloud/errors.js";
import { parseStack } from "../../src/config/load.js";
import {
  BINDING,
  EP,
  FED,
  epName,
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
  rpName,
  STACK_HEAD,
  stackOf,
  type FakeWorld,
} from "../fixtures/builders.js";

const VIEWERS = `  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:bob@example.com, user:alice@example.com]
`;
const INVOKER = `  invoker:
    type: ${MEMBER}
    properties:
      name: churn
      role: roles/aiplatform.user
      member: user:dana@example.com
`;
const BASIC = `${STACK_HEAD}resources:\n${VIEWERS}${INVOKER}`;

const policy = (bindings: Policy["bindings"], etag = "BwYAAAAAAAA="): Policy => ({ version: 1, bindings, etag });
const viewersLive = (members: string[]) => ({ role: "roles/gkebackup.viewer", members });
const invokerLive = (members: string[]) => ({ role: "roles/aiplatform.user", members });

const liveInSync = (): FakeWorld => ({
  policies: {
    [RP]: policy(
      [
        viewersLive(["user:alice@example.com", "user:bob@example.com"]),
        { role: "roles/gkebackup.admin", members: ["group:platform@example.com"] },
      ],
      "AAAAAAAAAAE=",
    ),
    [EP]: policy([invokerLive(["user:dana@example.com", "user:erin@example.com"])], "AAAAAAAAAAI="),
  },
  federations: { [FED]: LAKE },
});

const stateInSync = (): State =>
  makeState("t", [
    bindingState(
      "viewers",
      { name: RP, role: "roles/gkebackup.viewer", members: ["user:alice@example.com", "user:bob@example.com"] },
      "AAAAAAAAAAE=",
    ),
    memberState(
      "invoker",
      { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" },
      "AAAAAAAAAAI=",
    ),
  ]);

async function run(stackText: string, state: State | undefined, world: FakeWorld, o: Partial<PlanOptions> = {}) {
  const cloud = fakeCloud(world);
  const r = await plan(stackOf(stackText), state, cloud.port, planOptions(o));
  // Every plan, whatever it says, is a valid plan document.
  expect(validate("plan.schema.json", JSON.parse(JSON.stringify(r.plan)))).toEqual([]);
  return { ...r, calls: cloud.calls };
}

const byAddress = (p: Plan, address: string): ResourceChange => {
  const c = p.resource_changes.find((x) => x.address === address);
  if (!c) throw new Error(`no change for ${address}: ${p.resource_changes.map((x) => x.address).join(", ")}`);
  return c;
};

describe("create", () => {
  it("creates every resource of a new stack, with full names, sorted members and an unknown etag", async () => {
    const { plan: p, diagnostics } = await run(BASIC, undefined, liveInSync());
    expect(diagnostics).toEqual([]);
    const viewers = byAddress(p, "viewers");
    expect(viewers.change.action).toEqual("create");
    expect(viewers.change.before).toBeNull();
    expect(viewers.change.after).toEqual({
      name: RP,
      role: "roles/gkebackup.viewer",
      members: ["user:alice@example.com", "user:bob@example.com"],
      etag: null,
      id: `${RP} roles/gkebackup.viewer`,
      project: "my-project",
    });
    expect(viewers.change.after_unknown).toEqual({ members: [false, false], etag: true });
    expect(viewers.policy).toBe(RP);
    expect(byAddress(p, "invoker").change.after).toMatchObject({
      id: `${EP} roles/aiplatform.user user:dana@example.com`,
      member: "user:dana@example.com",
    });
    expect(p.applyable).toBe(true);
    expect(planCounts(p)).toEqual({ import: 0, add: 2, change: 0, destroy: 0 });
  });

  it("puts the condition title in the id", async () => {
    const text = `${STACK_HEAD}resources:
  temp:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.admin
      members: [user:oncall@example.com]
      condition: { title: until-2027, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' }
`;
    const { plan: p } = await run(text, undefined, liveInSync());
    expect(byAddress(p, "temp").change.after).toMatchObject({
      id: `${RP} roles/gkebackup.admin until-2027`,
      condition: { title: "until-2027" },
    });
  });

  it("reads each distinct policy once, however many resources edit it", async () => {
    const text = `${STACK_HEAD}resources:
${VIEWERS}  admins:
    type: ${BINDING}
    properties: { name: us-central1/nightly, role: roles/gkebackup.admin, members: [user:a@example.com] }
  restorers:
    type: ${BINDING}
    properties: { name: ${RP}, role: roles/gkebackup.restoreAdmin, members: [user:a@example.com] }
${INVOKER}`;
    const { calls, plan: p } = await run(text, undefined, liveInSync());
    expect(calls.getIamPolicy.sort()).toEqual([`endpoint ${EP}`, `restorePlan ${RP}`]);
    expect(p.policies.map((x) => x.name)).toEqual([EP, RP]);
  });
});

describe("no-op", () => {
  it("plans no changes when stack, state and live agree (other bindings and members are not ours)", async () => {
    const { plan: p, diagnostics } = await run(BASIC, stateInSync(), liveInSync());
    expect(diagnostics).toEqual([]);
    expect(p.resource_changes.map((c) => [c.address, c.change.action])).toEqual([
      ["viewers", "no-op"],
      ["invoker", "no-op"],
    ]);
    expect(p.resource_drift).toEqual([]);
    expect(p.applyable).toBe(false);
    expect(byAddress(p, "viewers").change.before).toMatchObject({ etag: "AAAAAAAAAAE=" });
  });

  it(
    "compares members case-insensitively: no diff between " + "User:Alice@Example.com and user:alice@example.com",
    async () => {
      const text = `${STACK_HEAD}resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: [user:ALICE@example.com, user:Bob@Example.COM] }
  invoker:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: user:Dana@Example.com }
`;
      const state = makeState("t", [
        bindingState(
          "viewers",
          { name: RP, role: "roles/gkebackup.viewer", members: ["user:Alice@Example.com", "user:bob@example.com"] },
          "AAAAAAAAAAE=",
        ),
        memberState(
          "invoker",
          { name: EP, role: "roles/aiplatform.user", member: "user:DANA@example.com" },
          "AAAAAAAAAAI=",
        ),
      ]);
      const { plan: p } = await run(text, state, liveInSync());
      expect(p.resource_changes.map((c) => c.change.action)).toEqual(["no-op", "no-op"]);
      expect(p.resource_drift).toEqual([]);
      expect(p.applyable).toBe(false);
    },
  );
});

describe("update", () => {
  it("updates a binding in place when only its members change, listing before and after", async () => {
    const state = makeState("t", [
      bindingState(
        "viewers",
        { name: RP, role: "roles/gkebackup.viewer", members: ["user:alice@example.com"] },
        "AAAAAAAAAAE=",
      ),
      memberState(
        "invoker",
        { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" },
        "AAAAAAAAAAI=",
      ),
    ]);
    const world = liveInSync();
    world.policies![RP]!.bindings![0] = viewersLive(["user:alice@example.com"]);
    const { plan: p } = await run(BASIC, state, world);
    const c = byAddress(p, "viewers");
    expect(c.change.action).toEqual("update");
    expect((c.change.before as { members: string[] }).members).toEqual(["user:alice@example.com"]);
    expect((c.change.after as { members: string[] }).members).toEqual([
      "user:alice@example.com",
      "user:bob@example.com",
    ]);
    expect(c.change.after_unknown).toEqual({ members: [false, false], etag: true });
    expect(c.change.replace_paths).toBeUndefined();
    expect(displayAction(c)).toBe("update");
    expect(planCounts(p)).toEqual({ import: 0, add: 0, change: 1, destroy: 0 });
  });
});

describe("replace", () => {
  it('replaces a binding whose role changed, with replace_paths [["role"]], creating first', async () => {
    const text = BASIC.replace("role: roles/gkebackup.viewer", "role: roles/gkebackup.admin");
    const world = liveInSync();
    world.policies![RP]!.bindings = [viewersLive(["user:alice@example.com", "user:bob@example.com"])];
    const { plan: p } = await run(text, stateInSync(), world);
    const c = byAddress(p, "viewers");
    expect(c.change.action).toEqual("replace");
    expect(c.change.replace_paths).toEqual([["role"]]);
    expect(c.action_reason).toBe("replace_because_cannot_update");
    expect(c.change.before).toMatchObject({ role: "roles/gkebackup.viewer" });
    expect(c.change.after).toMatchObject({ role: "roles/gkebackup.admin", id: `${RP} roles/gkebackup.admin` });
    expect(displayAction(c)).toBe("replace");
    expect(planCounts(p)).toEqual({ import: 0, add: 1, change: 0, destroy: 1 });
  });

  it("replaces a member resource whose member changed", async () => {
    const text = BASIC.replace("member: user:dana@example.com", "member: user:erin@example.com");
    const { plan: p } = await run(text, stateInSync(), liveInSync());
    const c = byAddress(p, "invoker");
    expect(c.change.action).toEqual("replace");
    expect(c.change.replace_paths).toEqual([["member"]]);
  });

  it("--replace of an address no resource has names the first 20 resources and counts the rest", async () => {
    const many = Array.from({ length: 25 }, (_, i) =>
      VIEWERS.replace("  viewers:", `  viewers${i}:`).replace("roles/gkebackup.viewer", `roles/gkebackup.viewer${i}`),
    ).join("");
    const { diagnostics } = await run(`${STACK_HEAD}resources:\n${many}`, undefined, {}, { replace: ["nosuch"] });
    const e = diagnostics.find((d) => d.summary === "--replace nosuch: no resource has this address")!;
    expect(e.detail).toBe(`Resources: ${Array.from({ length: 20 }, (_, i) => `viewers${i}`).join(", ")} and 5 more.`);
  });

  it("replaces on request (--replace) even when nothing changed", async () => {
    const { plan: p } = await run(BASIC, stateInSync(), liveInSync(), { replace: ["viewers"] });
    const c = byAddress(p, "viewers");
    expect(c.change.action).toEqual("replace");
    expect(c.action_reason).toBe("replace_by_request");
  });
});

describe("delete", () => {
  const extra = bindingState(
    "old",
    { name: rpName("weekly"), role: "roles/gkebackup.viewer", members: ["user:old@example.com"] },
    "AAAAAAAAAAM=",
  );
  const world = (): FakeWorld => {
    const w = liveInSync();
    w.policies![rpName("weekly")] = policy([viewersLive(["user:old@example.com"])], "AAAAAAAAAAM=");
    return w;
  };

  it("destroys a state resource that is no longer in the stack", async () => {
    const state = stateInSync();
    state.resources.push(extra);
    const { plan: p, diagnostics } = await run(BASIC, state, world());
    expect(diagnostics).toEqual([]);
    const c = byAddress(p, "old");
    expect(c.change.action).toEqual("delete");
    expect(c.change.after).toBeNull();
    expect(c.change.before).toEqual(extra.outputs);
    expect(c.action_reason).toBe("delete_because_no_resource_config");
    expect(planCounts(p)).toEqual({ import: 0, add: 0, change: 0, destroy: 1 });
  });

  it("refuses to destroy a protected resource: an error diagnostic, no delete", async () => {
    const state = stateInSync();
    state.resources.push({ ...extra, protect: true });
    const { plan: p, diagnostics } = await run(BASIC, state, world());
    const errors = diagnostics.filter((d) => d.severity === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.summary).toContain("old has protect: true and cannot be destroyed");
    expect(errors[0]!.address).toBe("old");
    expect(p.errored).toBe(true);
    expect(p.applyable).toBe(false);
    expect(p.resource_changes.find((c) => c.address === "old")).toBeUndefined();
  });

  it("destroys everything with destroy: true, without reading data sources", async () => {
    const { plan: p, calls } = await run(BASIC, stateInSync(), liveInSync(), { destroy: true });
    expect(p.resource_changes.map((c) => [c.address, c.change.action])).toEqual([
      ["viewers", "delete"],
      ["invoker", "delete"],
    ]);
    expect(calls.getFederation).toEqual([]);
  });
});

describe("protect and replacement", () => {
  // A replacement destroys the old grant: protect refuses it as it refuses a destroy.
  const PROTECTED =
    `${STACK_HEAD}resources:\n${VIEWERS}    options: { protect: true ` +
    `}\n${INVOKER}    options: { protect: true }\n`;
  const refusal = async (text: string, o: Partial<PlanOptions> = {}, w: FakeWorld = liveInSync()) => {
    const { plan: p, diagnostics } = await run(text, stateInSync(), w, o);
    const errors = diagnostics.filter((d) => d.severity === "error");
    expect(errors, JSON.stringify(diagnostics)).toHaveLength(1);
    expect(p.errored).toBe(true);
    expect(p.applyable).toBe(false);
    expect(p.resource_changes.filter((c) => c.change.action === "delete" || c.change.action === "replace")).toEqual([]);
    return errors[0]!;
  };

  it(
    "refuses to replace a protected member resource whose member " + "changed: an error at its protect option",
    async () => {
      const text = PROTECTED.replace("member: user:dana@example.com", "member: user:erin@example.com");
      const e = await refusal(text);
      expect(e.summary).toBe("invoker has protect: true and cannot be replaced");
      expect(e.address).toBe("invoker");
      expect(e.detail).toContain("changing member replaces it");
      expect(e.detail).toContain("protect: false");
      expect(e.file).toBeDefined();
      // The invoker's protect option: the last line of the stack.
      expect(e.line).toBe(text.trimEnd().split("\n").length);
      expect(e.column).toBeGreaterThan(0);
    },
  );

  it("refuses to replace a protected member resource whose object (name) changed", async () => {
    const w = liveInSync();
    w.policies![epName("other")] = policy([], "AAAAAAAAAAQ=");
    const e = await refusal(PROTECTED.replace("name: churn", "name: other"), {}, w);
    expect(e.summary).toBe("invoker has protect: true and cannot be replaced");
    expect(e.detail).toContain("changing name replaces it");
  });

  it("refuses to replace a protected binding whose role or condition changed", async () => {
    const role = await refusal(PROTECTED.replace("role: roles/gkebackup.viewer", "role: roles/gkebackup.admin"));
    expect(role.summary).toBe("viewers has protect: true and cannot be replaced");
    expect(role.detail).toContain("changing role replaces it");
    const conditioned = PROTECTED.replace(
      "      members: [user:bob@example.com, user:alice@example.com]\n",
      "      members: [user:bob@example.com, user:alice@example.com]\n      condition: { title: until-2027, " +
        "expression: 'request.time < timestamp(\"2027-01-01T00:00:00Z\")' }\n",
    );
    const condition = await refusal(conditioned);
    expect(condition.summary).toBe("viewers has protect: true and cannot be replaced");
    expect(condition.detail).toContain("changing condition replaces it");
  });

  it("refuses to replace a protected resource whose type changed (the old one would be destroyed)", async () => {
    const text = PROTECTED.replace(
      `    type: ${BINDING}\n    properties:\n      name: nightly\n      role: ` +
        `roles/gkebackup.viewer\n      members: [user:bob@example.com, user:alice@example.com]`,
      "    type: cloudnative:backup/v1:RestorePlanIamMember\n    properties:\n      name: nightly\n      " +
        "role: roles/gkebackup.viewer\n      member: user:bob@example.com",
    );
    expect(text).toContain("RestorePlanIamMember");
    const e = await refusal(text);
    expect(e.summary).toBe("viewers has protect: true and cannot be replaced");
    expect(e.detail).toContain("changing type replaces it");
  });

  it("refuses --replace of a protected resource", async () => {
    const e = await refusal(PROTECTED, { replace: ["viewers"] });
    expect(e.summary).toBe("viewers has protect: true and cannot be replaced");
    expect(e.detail).toContain("--replace");
  });

  it("still updates a protected binding in place (members shrink): an update destroys no resource", async () => {
    const text = PROTECTED.replace(
      "members: [user:bob@example.com, user:alice@example.com]",
      "members: [user:alice@example.com]",
    );
    const { plan: p, diagnostics } = await run(text, stateInSync(), liveInSync());
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(byAddress(p, "viewers").change.action).toEqual("update");
    expect(p.applyable).toBe(true);
  });

  it("replaces an unprotected resource as before when protect: false is set with the change", async () => {
    const text = PROTECTED.replace(
      "member: user:dana@example.com\n    options: { protect: true }",
      "member: user:erin@example.com\n    options: { protect: false }",
    );
    const { plan: p, diagnostics } = await run(text, stateInSync(), liveInSync());
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(byAddress(p, "invoker").change.action).toEqual("replace");
  });
});

describe("--target", () => {
  it("limits the plan to the target and what it depends on", async () => {
    const text = `${STACK_HEAD}resources:
${VIEWERS}${INVOKER}    options: { dependsOn: [viewers] }
  admins:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.admin, members: [user:a@example.com] }
`;
    const { plan: p } = await run(text, undefined, liveInSync(), { targets: ["invoker"] });
    expect(p.resource_changes.map((c) => c.address).sort()).toEqual(["invoker", "viewers"]);
    expect(p.options.targets).toEqual(["invoker"]);
  });

  it("reports a target that names nothing", async () => {
    const { diagnostics } = await run(BASIC, undefined, liveInSync(), { targets: ["nobody"] });
    expect(diagnostics.map((d) => d.summary)).toContainEqual(expect.stringContaining("--target nobody"));
  });
});

describe("refresh", () => {
  it("refresh=false reads no policy and trusts the state", async () => {
    const world = liveInSync();
    world.policies![RP]!.bindings = []; // would be drift if read
    const { plan: p, calls } = await run(BASIC, stateInSync(), world, { refresh: false });
    expect(calls.getIamPolicy).toEqual([]);
    expect(p.resource_drift).toEqual([]);
    expect(p.resource_changes.map((c) => c.change.action)).toEqual(["no-op", "no-op"]);
    expect(p.policies).toEqual([]);
  });

  it("reports drift when a managed member was removed outside converge, and plans to restore it", async () => {
    const world = liveInSync();
    world.policies![RP]!.bindings![0] = viewersLive(["user:alice@example.com"]);
    const { plan: p } = await run(BASIC, stateInSync(), world);
    expect(p.resource_drift).toHaveLength(1);
    const d = p.resource_drift[0]!;
    expect(d.address).toBe("viewers");
    expect(d.change.action).toEqual("update");
    expect((d.change.before as { members: string[] }).members).toEqual([
      "user:alice@example.com",
      "user:bob@example.com",
    ]);
    expect((d.change.after as { members: string[] }).members).toEqual(["user:alice@example.com"]);
    expect(byAddress(p, "viewers").change.action).toEqual("update");
  });

  it("recreates a grant deleted outside converge", async () => {
    const world = liveInSync();
    world.policies![EP]!.bindings = [invokerLive(["user:erin@example.com"])];
    const { plan: p } = await run(BASIC, stateInSync(), world);
    expect(p.resource_drift.map((c) => [c.address, c.change.action])).toEqual([["invoker", "delete"]]);
    const c = byAddress(p, "invoker");
    expect(c.change.action).toEqual("create");
    expect(c.action_reason).toBe("create_because_gone");
  });

  it(
    "an object that no longer exists (NOT_FOUND) is an error at the " +
      "resource's name, as apply would fail (issue 13)",
    async () => {
      const world = liveInSync();
      delete world.policies![EP];
      const { plan: p, diagnostics } = await run(BASIC, stateInSync(), world);
      expect(p.errored).toBe(true);
      expect(p.policies.find((x) => x.name === EP)).toMatchObject({ found: false });
      expect(diagnostics).toEqual([
        expect.objectContaining({
          severity: "error",
          address: "invoker",
          line: 15,
          summary: `invoker: endpoint ${EP} does not exist`,
        }),
      ]);
    },
  );

  it("deleting a resource whose object no longer exists is no error (the grant is gone with it)", async () => {
    const world = liveInSync();
    delete world.policies![EP];
    const { plan: p, diagnostics } = await run(`${STACK_HEAD}resources:\n${VIEWERS}`, stateInSync(), world);
    expect(diagnostics).toEqual([]);
    expect(byAddress(p, "invoker").change.action).toEqual("delete");
  });
});

describe("data sources", () => {
  const LAKE_STACK = `${STACK_HEAD}variables:
${lakeVariable()}resources:
${LAKE_INVOKER}outputs:
  lakeEndpoint: \${lake.endpointUri}
`;

  it("reads a function with known arguments during plan and uses its result", async () => {
    const { plan: p, calls } = await run(LAKE_STACK, undefined, liveInSync());
    expect(calls.getFederation).toEqual([FED]);
    expect(byAddress(p, "invoker").change.after).toMatchObject({
      member: "serviceAccount:data-eng@my-project.iam.gserviceaccount.com",
    });
    expect(p.variables).toMatchObject({
      lake: {
        endpointUri: "thrift://10.0.0.7:9083",
        backendMetastores: { "1": `projects/my-project/locations/us-central1/services/hive` },
      },
    });
    expect(p.output_changes.lakeEndpoint).toMatchObject({ action: "create", after: "thrift://10.0.0.7:9083" });
  });

  it(
    "defers a read whose arguments depend on a created resource's " + "etag: a read change with after_unknown true",
    async () => {
      const text = `${STACK_HEAD}variables:
${lakeVariable('"lake-${viewers.etag}"')}resources:
${VIEWERS}${LAKE_INVOKER}outputs:
  lakeEndpoint: \${lake.endpointUri}
`;
      const { plan: p, calls, diagnostics } = await run(text, undefined, liveInSync());
      expect(diagnostics).toEqual([]);
      expect(calls.getFederation).toEqual([]);
      const read = byAddress(p, "lake");
      expect(read.mode).toBe("data");
      expect(read.change.action).toEqual("read");
      expect(read.change.after_unknown).toBe(true);
      expect(read.action_reason).toBe("read_because_dependency_pending");
      expect(read.dependencies).toEqual(["viewers"]);
      expect(displayAction(read)).toBe("read");
      const invoker = byAddress(p, "invoker");
      expect(invoker.change.action).toEqual("create");
      expect(invoker.change.after_unknown).toMatchObject({ member: true, id: true, etag: true });
      expect(p.output_changes.lakeEndpoint).toMatchObject({ action: "create", after: null, after_unknown: true });
      // data reads are not counted in the summary
      expect(planCounts(p)).toEqual({ import: 0, add: 2, change: 0, destroy: 0 });
    },
  );

  it("reports a federation that does not exist at the variable", async () => {
    const world = liveInSync();
    delete world.federations![FED];
    const { plan: p, diagnostics } = await run(LAKE_STACK, undefined, world);
    expect(p.errored).toBe(true);
    expect(diagnostics.find((d) => d.severity === "error")).toMatchObject({
      address: "lake",
      line: 7,
      column: 5,
      summary: expect.stringContaining(`federation ${FED} does not exist`),
    });
  });
});

describe("import", () => {
  it("adopts an existing binding that matches the configuration: an import, no write", async () => {
    const text = BASIC.replace(
      "      members: [user:bob@example.com, user:alice@example.com]\n",
      `      members: [user:bob@example.com, user:alice@example.com]\n    ` +
        `options: { import: "${RP} roles/gkebackup.viewer" }\n`,
    );
    const { plan: p, diagnostics } = await run(text, undefined, liveInSync());
    expect(diagnostics).toEqual([]);
    const c = byAddress(p, "viewers");
    expect(c.change.action).toEqual("no-op");
    expect(c.change.importing).toEqual({ id: `${RP} roles/gkebackup.viewer` });
    expect(displayAction(c)).toBe("import");
    expect(planCounts(p).import).toBe(1);
    expect(p.applyable).toBe(true);
  });

  it("imports and updates when the live members differ", async () => {
    const text = BASIC.replace(
      "      members: [user:bob@example.com, user:alice@example.com]\n",
      `      members: [user:bob@example.com, user:alice@example.com, user:zoe@example.com]\n  ` +
        `  options: { import: "nightly roles/gkebackup.viewer" }\n`,
    );
    const { plan: p } = await run(text, undefined, liveInSync());
    const c = byAddress(p, "viewers");
    expect(c.change.action).toEqual("update");
    expect(displayAction(c)).toBe("import-update");
    expect(planCounts(p)).toEqual({ import: 1, add: 1, change: 1, destroy: 0 });
  });

  it("reports an import of a binding that does not exist, at the import option", async () => {
    const text = BASIC.replace(
      "      members: [user:bob@example.com, user:alice@example.com]\n",
      `      members: [user:alice@example.com]\n    options: { import: "nightly roles/gkebackup.restoreUser" }\n`,
    ).replace("role: roles/gkebackup.viewer", "role: roles/gkebackup.restoreUser");
    const { plan: p, diagnostics } = await run(text, undefined, liveInSync());
    expect(p.errored).toBe(true);
    expect(diagnostics[0]).toMatchObject({
      address: "viewers",
      line: 12,
      column: 24,
      summary: expect.stringContaining("no binding for roles/gkebackup.restoreUser"),
    });
  });
});

describe("plan-time checks of interpolated values", () => {
  it("reports a member that becomes malformed after interpolation, at the member", async () => {
    // (From a data source: a value known when the stack loads is checked then, test/config/load-time-values.test.ts.)
    const text = `${STACK_HEAD}variables:
${lakeVariable()}  who: \${lake.labels.owner}
resources:
  viewers:
    type: ${BINDING}
    properties: { name: nightly, role: roles/gkebackup.viewer, members: ["\${who}@example.com"] }
`;
    const { plan: p, diagnostics } = await run(text, undefined, liveInSync());
    expect(p.errored).toBe(true);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      line: 14,
      column: 74,
      address: "viewers",
      summary: expect.stringContaining('member "data-eng@example.com" has no type prefix'),
    });
  });
});

// Values from variables of literals are known when the stack loads: the loader finds these (the
// plan finds the same for values from a data source, with the same claims).
describe("duplicates in values known once interpolated", () => {
  it("reports two bindings of the same role and condition on the same object, at the second resource", async () => {
    const text = `${STACK_HEAD}variables:
  plan: nightly
resources:
${VIEWERS}  again:
    type: ${BINDING}
    properties: { name: "\${plan}", role: roles/gkebackup.viewer, members: [user:carol@example.com] }
`;
    const { diagnostics } = parseStack("/virtual/stack.yaml", text);
    expect(diagnostics).toEqual([
      expect.objectContaining({
        severity: "error",
        address: "again",
        line: 14,
        column: 3,
        summary: `resources "viewers" and "again" both manage role roles/gkebackup.viewer on ${RP}`,
      }),
    ]);
  });

  it("reports the same member (compared canonically) twice, and not two different members", async () => {
    const text = `${STACK_HEAD}variables:
  who: Dana
resources:
${INVOKER}  twice:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: "user:\${who}@example.com" }
  other:
    type: ${MEMBER}
    properties: { name: churn, role: roles/aiplatform.user, member: "user:\${who}2@example.com" }
`;
    const { diagnostics } = parseStack("/virtual/stack.yaml", text);
    expect(diagnostics).toEqual([
      expect.objectContaining({
        address: "twice",
        summary: `resources "invoker" and "twice" both grant user:Dana@example.com role roles/aiplatform.user on ${EP}`,
      }),
    ]);
  });
});

describe("outputs", () => {
  it("plans output creation, no-op and deletion against the state", async () => {
    const text = `${BASIC}outputs:
  viewersId: \${viewers.id}
  fresh: hello
`;
    const state = stateInSync();
    state.outputs = { viewersId: `${RP} roles/gkebackup.viewer`, gone: 1 };
    const { plan: p } = await run(text, state, liveInSync());
    expect(p.output_changes).toEqual({
      viewersId: expect.objectContaining({ action: "no-op" }),
      fresh: expect.objectContaining({ action: "create", after: "hello" }),
      gone: expect.objectContaining({ action: "delete", before: 1, after: null }),
    });
    expect(p.applyable).toBe(true);
  });
});

describe("ignoreChanges", () => {
  it("keeps the live members when members are ignored: no-op despite a different configuration", async () => {
    const text = BASIC.replace(
      "      members: [user:bob@example.com, user:alice@example.com]\n",
      "      members: [user:zoe@example.com]\n    options: { ignoreChanges: [members] }\n",
    );
    const { plan: p } = await run(text, stateInSync(), liveInSync());
    expect(byAddress(p, "viewers").change.action).toEqual("no-op");
  });
});

describe("read failures", () => {
  it("reports a policy that cannot be read with the resource's address, and plans nothing for it", async () => {
    const cloud = fakeCloud(liveInSync());
    const port = {
      ...cloud.port,
      getIamPolicy: async (kind: "restorePlan" | "endpoint", name: string) => {
        if (name === RP)
          throw Object.assign(new Error("The caller does not have permission"), { status: "PERMISSION_DENIED" });
        return cloud.port.getIamPolicy(kind, name);
      },
    };
    const r = await plan(stackOf(BASIC), stateInSync(), port, planOptions());
    expect(validate("plan.schema.json", JSON.parse(JSON.stringify(r.plan)))).toEqual([]);
    expect(r.plan.errored).toBe(true);
    const d = r.diagnostics.find((x) => x.severity === "error")!;
    expect(d).toMatchObject({
      address: "viewers",
      summary: `viewers: cannot read the IAM policy of ${RP}`,
      detail: "The caller does not have permission",
    });
    expect(r.plan.resource_changes.find((c) => c.address === "viewers")).toBeUndefined();
    expect(byAddress(r.plan, "invoker").change.action).toEqual("no-op");
  });
});

/** The in-sync cloud, whose reads of the policies `failing` names fail with its error. */
function portFailing(failing: (name: string) => Error | undefined) {
  const cloud = fakeCloud(liveInSync());
  return {
    ...cloud.port,
    getIamPolicy: async (kind: "restorePlan" | "endpoint", name: string) => {
      const e = failing(name);
      if (e) throw e;
      return cloud.port.getIamPolicy(kind, name);
    },
  };
}

/** Every read fails with `failing`: the plan has one error, at the first resource, with `summary`,
 *  and `why` and both policies in its detail. */
async function expectOneSharedError(failing: (name: string) => Error, summary: string, why: string): Promise<void> {
  const r = await plan(stackOf(BASIC), stateInSync(), portFailing(failing), planOptions());
  expect(r.plan.errored).toBe(true);
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({ address: "viewers", summary });
  expect(errors[0]!.detail).toContain(why);
  expect(errors[0]!.detail).toContain(RP);
  expect(errors[0]!.detail).toContain(EP);
  expect(errors[0]!.line).toBeGreaterThan(0);
}

// With no credentials, no read is sent and each fails alike: a 1,200-policy plan printed the same
// advice 1,200 times (3,600 lines). Reads that failed for want of an access token are one error.
describe("read failures for want of an access token", () => {
  const noToken = (name: string) =>
    new CloudError({
      status: "UNAUTHENTICATED",
      httpStatus: 0,
      methodId: "getIamPolicy",
      resource: name,
      serverMessage:
        "could not get Google Cloud credentials (Application Default Credentials): Could not load the " +
        "default credentials. Run `gcloud auth application-default login`",
    });

  it("are one error naming how many policies and resources were not read, with the advice once", async () => {
    await expectOneSharedError(
      noToken,
      "no access token: 2 IAM policies (2 resources) were not read",
      "Could not load the default credentials. Run `gcloud auth application-default login`",
    );
  });

  it("leave other failures their own errors, and one policy without a token is reported as before", async () => {
    const denied = Object.assign(new Error("The caller does not have permission"), { status: "PERMISSION_DENIED" });
    const r = await plan(
      stackOf(BASIC),
      stateInSync(),
      portFailing((name) => (name === RP ? noToken(name) : denied)),
      planOptions(),
    );
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => d.summary).sort()).toEqual([
      `invoker: cannot read the IAM policy of ${EP}`,
      `viewers: cannot read the IAM policy of ${RP}`,
    ]);
  });
});

// A wrong or offline endpoint: every read ends unable to connect (the first ones after their
// retries, the rest unsent), each saying the same; a 12,000-policy plan printed 12,000 errors.
describe("read failures that found no connection to the API", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
  const noConnection = (name: string) =>
    new CloudError({
      status: "UNAVAILABLE",
      httpStatus: 0,
      methodId: "getIamPolicy",
      resource: name,
      serverMessage: "network error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9",
      attempts: 10,
      cause: refused,
    });

  it("are one error naming how many policies and resources were not read, and why once", async () => {
    await expectOneSharedError(
      noConnection,
      "no connection to the API: 2 IAM policies (2 resources) were not read",
      "connect ECONNREFUSED 127.0.0.1:9",
    );
  });

  it("an error with an HTTP status, or one policy alone, keeps its own error", async () => {
    const unavailable = new CloudError({
      status: "UNAVAILABLE",
      httpStatus: 503,
      methodId: "getIamPolicy",
      resource: RP,
      serverMessage: "backend unavailable",
      attempts: 10,
      cause: refused,
    });
    const r = await plan(
      stackOf(BASIC),
      stateInSync(),
      portFailing((name) => (name === RP ? unavailable : noConnection(name))),
      planOptions(),
    );
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => d.summary).sort()).toEqual([
      `invoker: cannot read the IAM policy of ${EP}`,
      `viewers: cannot read the IAM policy of ${RP}`,
    ]);
  });
});

describe("read failures for resources not yet in the state", () => {
  // The planner prefetches the policy of every configured resource (to keep one read per
  // policy); a failure of that read must not be dropped just because the resource is new.
  const denied = (status: string) => {
    const cloud = fakeCloud(liveInSync());
    return {
      ...cloud.port,
      getIamPolicy: async (kind: "restorePlan" | "endpoint", name: string) => {
        if (name === RP) throw Object.assign(new Error(`${status}: the caller cannot get the policy`), { status });
        return cloud.port.getIamPolicy(kind, name);
      },
    };
  };

  it.each(["PERMISSION_DENIED", "UNAUTHENTICATED"])(
    "reports %s on the policy of a resource to be created, instead of planning the create",
    async (status) => {
      const r = await plan(stackOf(BASIC), undefined, denied(status), planOptions());
      expect(r.plan.errored).toBe(true);
      expect(r.diagnostics.filter((d) => d.severity === "error")).toContainEqual(
        expect.objectContaining({ address: "viewers", summary: expect.stringContaining(RP) }),
      );
    },
  );

  it("says so when the object a new grant is for does not exist (the create cannot succeed)", async () => {
    const world = liveInSync();
    delete world.policies![RP];
    const r = await plan(stackOf(BASIC), undefined, fakeCloud(world).port, planOptions());
    expect(r.plan.policies.find((x) => x.name === RP)).toMatchObject({ found: false });
    expect(r.diagnostics).toContainEqual(
      expect.objectContaining({ address: "viewers", summary: expect.stringContaining(RP) }),
    );
  });
});
