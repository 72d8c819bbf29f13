// Google refuses an allow policy with more than 1,500 principals: a plan that would leave one
// (live policy + this plan's modifications) is an error naming the object and the count, and a
// stack that alone lists more than 1,500 principals for one object does not load.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import type { Policy } from "../../src/generated/schemas.js";
import { plan } from "../../src/plan/planner.js";
import { BINDING, EP, MEMBER, RP, fakeCloud, planOptions, stackOf } from "../fixtures/builders.js";

const users = (n: number, prefix = "u") => Array.from({ length: n }, (_, i) => `user:${prefix}${i}@example.com`);
const live = (members: string[]): Policy => ({
  version: 1,
  etag: "BwYAAAAAAAA=",
  bindings: [{ role: "roles/gkebackup.viewer", members }],
});

const stack = (resources: string) => `name: t
provider:
  project: my-project
  location: us-central1
resources:
${resources}`;
const binding = (address: string, role: string, members: string[]) => `  ${address}:
    type: ${BINDING}
    properties:
      name: nightly
      role: ${role}
      members: [${members.join(", ")}]
`;

describe("a planned policy over 1,500 principals", () => {
  it("is an error naming the object, the count and the resource, and the plan is not applyable", async () => {
    const text = stack(
      binding("first", "roles/gkebackup.restoreAdmin", ["user:x@example.com"]) +
        binding("admins", "roles/gkebackup.admin", ["user:a@example.com", "user:b@example.com"]),
    );
    const r = await plan(
      stackOf(text),
      undefined,
      fakeCloud({ policies: { [RP]: live(users(1498)) } }).port,
      planOptions(),
    );
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.summary).toBe(
      `${RP}: the planned policy would hold 1501 principals, more than the 1,500 Google allows`,
    );
    expect(errors[0]!.detail).toContain("It holds 1498 now; this plan changes it through first, admins.");
    expect(errors[0]).toMatchObject({ line: 6, column: 3, address: "first" });
    expect(r.plan.errored).toBe(true);
    expect(r.plan.applyable).toBe(false);
  });

  it("counts what the plan removes: replacing members keeps a full policy within the limit", async () => {
    // The binding is authoritative for its role: 1,500 live viewers become these 1,500 others.
    const text = stack(binding("viewers", "roles/gkebackup.viewer", users(1500, "v")));
    const r = await plan(
      stackOf(text),
      undefined,
      fakeCloud({ policies: { [RP]: live(users(1500)) } }).port,
      planOptions(),
    );
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(r.plan.errored).toBe(false);
  });

  it("counts every binding of the object, conditional ones too, and each object on its own", async () => {
    const text = stack(
      binding("admins", "roles/gkebackup.admin", ["user:a@example.com"]) +
        `  invoker:\n    type: ${MEMBER}\n    properties:\n      name: churn\n      role: ` +
        `roles/aiplatform.user\n      member: user:a@example.com\n`,
    );
    const conditional: Policy = {
      version: 3,
      bindings: [
        { role: "roles/gkebackup.viewer", members: users(1000) },
        { role: "roles/gkebackup.viewer", members: users(500, "c"), condition: { title: "t", expression: "true" } },
      ],
    };
    const r = await plan(
      stackOf(text),
      undefined,
      fakeCloud({ policies: { [RP]: conditional, [EP]: live(users(1499)) } }).port,
      planOptions(),
    );
    expect(r.diagnostics.filter((d) => d.severity === "error").map((d) => d.summary)).toEqual([
      `${RP}: the planned policy would hold 1501 principals, more than the 1,500 Google allows`,
    ]);
  });

  it("is only checked on the selected changes (--target)", async () => {
    const text = stack(
      binding("small", "roles/gkebackup.restoreAdmin", ["user:x@example.com"]) +
        binding("admins", "roles/gkebackup.admin", ["user:a@example.com", "user:b@example.com"]),
    );
    // 1,499 live: small alone makes 1,500, admins alone 1,501.
    const cloud = fakeCloud({ policies: { [RP]: live(users(1499)) } }).port;
    expect((await plan(stackOf(text), undefined, cloud, planOptions({ targets: ["small"] }))).plan.errored).toBe(false);
    expect((await plan(stackOf(text), undefined, cloud, planOptions({ targets: ["admins"] }))).plan.errored).toBe(true);
  });
});

describe("a stack that alone lists more than 1,500 principals for one object", () => {
  it("does not load: one error at the resource that goes over, naming the object and the count", () => {
    const text = stack(
      binding("viewers", "roles/gkebackup.viewer", users(1000)) +
        binding("admins", "roles/gkebackup.admin", users(501, "a")),
    );
    const r = parseStack("/virtual/stack.yaml", text);
    expect(r.stack).toBeUndefined();
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      summary: `admins: the stack grants 1501 principals on ${RP}, more than one policy may hold`,
      path: "resources.admins.properties.members",
      line: 17,
    });
  });

  it("counts a principal listed twice for the same binding once, and 1,500 loads", () => {
    const text = stack(
      binding("viewers", "roles/gkebackup.viewer", users(1000)) +
        binding("admins", "roles/gkebackup.admin", [...users(500, "a"), "user:A0@example.com"]),
    );
    expect(parseStack("/virtual/stack.yaml", text).stack).toBeDefined();
  });
});
