// Google names one project by its number and by its ID: `projects/123456789012/…` and
// `projects/my-project/…` are one object, one policy. A plan completes every name with the
// project's ID (Resource Manager's answer), so two resources on one policy are one policy to read
// and to plan, and their claims meet (src/engine/project-ids.ts, NameDefaults.projectIds).
import { describe, expect, it } from "vitest";
import { completeName, projectNumbersOf } from "../../src/cloud/names.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import type { CloudPort } from "../../src/contracts/cloud-port.js";
import {
  lateProjectNumbers,
  priorWithProjectIds,
  resolveProjectNumbers,
  knownProjectNumbers,
} from "../../src/engine/project-ids.js";
import { plan } from "../../src/plan/planner.js";
import {
  epName,
  fakeCloud,
  makeState,
  MEMBER,
  memberState,
  planOptions,
  PROJECT,
  rpName,
  stackOf,
} from "../fixtures/builders.js";

const NUMBER = "123456789012";
const IDS = new Map([[NUMBER, PROJECT]]);

describe("names completed with the project ID", () => {
  it("replaces a known project number, in full and short names, and leaves the rest as written", () => {
    expect(completeName("restorePlan", rpName("n", NUMBER), { projectIds: IDS })).toMatchObject({
      project: PROJECT,
      full: rpName("n"),
    });
    expect(
      completeName("restorePlan", "n", { project: NUMBER, location: "us-central1", projectIds: IDS }),
    ).toMatchObject({ full: rpName("n") });
    expect(completeName("restorePlan", rpName("n", "999"), { projectIds: IDS })).toMatchObject({
      full: rpName("n", "999"),
    });
    expect(completeName("restorePlan", rpName("n", NUMBER), {})).toMatchObject({ full: rpName("n", NUMBER) });
  });

  it("finds the numbers among names", () => {
    expect([
      ...projectNumbersOf([rpName("a", NUMBER), rpName("b"), "projects/42/locations/l/endpoints/e", "junk"]),
    ]).toEqual([NUMBER, "42"]);
  });
});

function portWith(projects: Record<string, string>, calls: string[] = []): CloudPort {
  return {
    ...fakeCloud({}).port,
    async getProject(p) {
      calls.push(p);
      const id = projects[p];
      if (!id)
        throw Object.assign(
          new Error(`getProject projects/${p}: PERMISSION_DENIED: Permission 'resourcemanager.projects.get' denied`),
          { status: "PERMISSION_DENIED" },
        );
      return { projectId: id, number: p };
    },
  };
}

describe("resolveProjectNumbers", () => {
  it("asks once per number it does not know, and nothing when there is none", async () => {
    const calls: string[] = [];
    const port = portWith({ [NUMBER]: PROJECT }, calls);
    expect(await resolveProjectNumbers(port, [])).toEqual(new Map());
    const ids = await resolveProjectNumbers(port, [NUMBER]);
    expect(ids).toEqual(IDS);
    await resolveProjectNumbers(port, [NUMBER], ids);
    expect(calls).toEqual([NUMBER]);
  });

  it("is a user error naming every number it cannot resolve, with the way out", async () => {
    const e = await resolveProjectNumbers(
      portWith({}),
      ["42", "7"],
      undefined,
      undefined,
      new Map([["7", ["a", "b (in the state)"]]]),
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UserError);
    const diags = (e as UserError).diagnostics;
    expect(diags.map((d) => d.summary)).toEqual([
      "cannot find the project ID of project number 42",
      "cannot find the project ID of project number 7 (used by a, b (in the state))",
    ]);
    expect(diags[0]!.detail).toMatch(/PERMISSION_DENIED[\s\S]*Write the project ID instead of 42/);
  });

  it("refuses an answer for another project", async () => {
    const port: CloudPort = { ...fakeCloud({}).port, getProject: async () => ({ projectId: "other", number: "1" }) };
    await expect(resolveProjectNumbers(port, [NUMBER])).rejects.toBeInstanceOf(UserError);
  });
});

describe("a plan with project numbers", () => {
  const stackText = `name: t
provider:
  project: ${PROJECT}
  location: us-central1
resources:
  by_id:
    type: ${MEMBER}
    properties: { name: nightly, role: roles/aiplatform.user, member: "user:a@example.com" }
  by_number:
    type: ${MEMBER}
    properties: { name: "${epName("nightly", NUMBER)}", role: roles/aiplatform.user, member: "user:a@example.com" }
`;

  it("finds the numbers a stack and its state write", () => {
    const state = makeState("t", [
      memberState("old", { name: epName("weekly", "77"), role: "roles/x", member: "user:b@example.com" }, "E"),
    ]);
    expect(knownProjectNumbers(stackOf(stackText), state)).toEqual(
      new Map([
        [NUMBER, ["by_number"]],
        ["77", ["old (in the state)"]],
      ]),
    );
  });

  it("reads the policy once and finds the two resources' claims on the same grant", async () => {
    const cloud = fakeCloud({ policies: { [epName("nightly")]: { version: 3, etag: "E1", bindings: [] } } });
    const r = await plan(stackOf(stackText), undefined, cloud.port, planOptions({ projectIds: IDS }));
    expect(cloud.calls.getIamPolicy).toEqual([`endpoint ${epName("nightly")}`]);
    expect(r.diagnostics.filter((d) => d.severity === "error").map((d) => d.address)).toContain("by_number");
  });

  it("names a state's objects by ID, so a stack that now writes the ID plans no change", async () => {
    const state = makeState("t", [
      memberState(
        "by_id",
        { name: epName("nightly", NUMBER), role: "roles/aiplatform.user", member: "user:a@example.com" },
        "E1",
      ),
    ]);
    const prior = priorWithProjectIds(state, IDS)!;
    expect(prior.resources[0]!.inputs.name).toBe(epName("nightly"));
    expect(prior.resources[0]!.outputs.project).toBe(PROJECT);
    expect(priorWithProjectIds(state, new Map())).toBe(state);
    const text = stackText.replace(/ {2}by_number:[\s\S]*$/, "");
    const cloud = fakeCloud({
      policies: {
        [epName("nightly")]: {
          version: 3,
          etag: "E1",
          bindings: [{ role: "roles/aiplatform.user", members: ["user:a@example.com"] }],
        },
      },
    });
    const r = await plan(stackOf(text), prior, cloud.port, planOptions({ projectIds: IDS }));
    expect(r.plan.resource_changes.map((c) => c.change.action)).toEqual(["no-op"]);
    expect(lateProjectNumbers(r.plan, IDS)).toEqual(new Set());
  });
});
