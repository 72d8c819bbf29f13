// Lint on values that only exist once `${…}` is resolved: a variable or a data source output must
// not slip allUsers, a basic role or an expired condition past review. Literal values, and values
// known when the stack loads (from variables and inputs), are linted when it loads and are not
// reported twice; a resource that waits on a data source is linted by the plan.
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { plan } from "../../src/plan/planner.js";
import { parseStack } from "../../src/config/load.js";
import { BINDING, EP, FED, LAKE, MEMBER, RP, fakeCloud, planOptions, stackOf } from "../fixtures/builders.js";

const STACK = (lint = "") => `name: t
provider:
  project: my-project
  location: us-central1
${lint}variables:
  everyone: allUsers
  readers: [group:sre@example.com, allAuthenticatedUsers]
  basic: roles/viewer
  expired: request.time < timestamp("2020-01-01T00:00:00Z")
  lake:
    fn::invoke:
      function: cloudnative:metastore/v1alpha:getFederation
      arguments: { federationId: lake, location: us-central1 }
resources:
  open:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: ["\${everyone}", user:a@example.com]
  listed:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.admin
      members: \${readers}
  editor:
    type: ${MEMBER}
    properties:
      name: churn
      role: \${basic}
      member: serviceAccount:\${lake.labels.owner}@my-project.iam.gserviceaccount.com
  old:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.backupAdmin
      members: [user:c@example.com]
      condition: { title: t, expression: "\${expired}" }
  literal:
    type: ${MEMBER}
    properties:
      name: churn
      role: roles/aiplatform.viewer
      member: allUsers
`;

const world = () => ({ policies: { [RP]: { bindings: [] }, [EP]: { bindings: [] } }, federations: { [FED]: LAKE } });
const lint = (ds: Diagnostic[]) =>
  ds
    .filter((d) => d.detail?.includes("[lint: "))
    .map((d) => ({
      severity: d.severity,
      path: d.path,
      rule: /\[lint: ([a-z-]+)\]/.exec(d.detail!)![1],
      line: d.line,
    }));

/** The diagnostics of loading the stack, then of planning it (when it loads). */
async function loadAndPlan(text: string, o: { strict?: boolean } = {}) {
  const loaded = parseStack("/virtual/stack.yaml", text, o);
  if (!loaded.stack) return { diagnostics: loaded.diagnostics, plan: undefined };
  const r = await plan(loaded.stack, undefined, fakeCloud(world()).port, planOptions(o));
  return { diagnostics: [...loaded.diagnostics, ...r.diagnostics], plan: r.plan };
}

describe("lint of resolved values", () => {
  it("reports each finding that a `${…}` value causes, at the field it came from, once", async () => {
    const r = await loadAndPlan(STACK());
    expect(lint(r.diagnostics).sort((a, b) => a.line! - b.line!)).toEqual([
      { severity: "warning", path: "resources.open.properties.members[0]", rule: "public-principal", line: 20 },
      { severity: "warning", path: "resources.listed.properties.members", rule: "public-principal", line: 26 },
      { severity: "warning", path: "resources.editor.properties.role", rule: "basic-role", line: 31 },
      {
        severity: "warning",
        path: "resources.old.properties.condition.expression",
        rule: "expired-condition",
        line: 39,
      },
      { severity: "warning", path: "resources.literal.properties.member", rule: "public-principal", line: 45 },
    ]);
    const open = r.diagnostics.find((d) => d.path === "resources.open.properties.members[0]")!;
    expect(open.summary).toBe("open: allUsers makes this grant public");
    expect(open.detail).toBe(
      "Anyone on the internet gets roles/gkebackup.viewer. The value comes " +
        'from "${everyone}". [lint: public-principal]',
    );
    expect(open.address).toBe("open");
    // Warnings: the plan is still made, with every resource in it.
    expect(r.plan?.errored).toBe(false);
    expect(r.plan?.resource_changes.map((c) => c.address).sort()).toEqual([
      "editor",
      "listed",
      "literal",
      "old",
      "open",
    ]);
    // What is known when the stack loads is linted by the loader; editor waits on the lake (a data source).
    expect(parseStack("/virtual/stack.yaml", STACK()).diagnostics.map((d) => d.path)).toEqual([
      "resources.literal.properties.member",
      "resources.open.properties.members[0]",
      "resources.listed.properties.members",
      "resources.old.properties.condition.expression",
    ]);
  });

  it(
    "--strict makes them errors: the stack does not load, and the " + "plan of a value from a data source errored",
    async () => {
      const loaded = await loadAndPlan(STACK(), { strict: true });
      expect(loaded.plan).toBeUndefined();
      expect(lint(loaded.diagnostics).map((d) => d.severity)).toEqual(["error", "error", "error", "error"]);
      const r = await plan(
        stackOf(
          STACK()
            .replace('"${everyone}"', "user:b@example.com")
            .replace("members: ${readers}", "members: [group:sre@example.com]")
            .replace('expression: "${expired}"', 'expression: request.time < timestamp("2999-01-01T00:00:00Z")')
            .replace("member: allUsers", "member: user:d@example.com"),
        ),
        undefined,
        fakeCloud(world()).port,
        planOptions({ strict: true }),
      );
      expect(lint(r.diagnostics).map((d) => [d.severity, d.rule])).toEqual([["error", "basic-role"]]);
      expect(r.plan.errored).toBe(true);
    },
  );

  it("a rule turned off in the stack's lint section stays off", async () => {
    const r = await loadAndPlan(STACK("lint:\n  public-principal: false\n  basic-role: false\n"));
    expect(lint(r.diagnostics).map((d) => d.rule)).toEqual(["expired-condition"]);
  });

  it("a condition on a public principal from a variable is refused before any request", async () => {
    const text = STACK().replace("members: [user:c@example.com]", 'members: ["${everyone}"]');
    const r = await loadAndPlan(text);
    expect(r.plan).toBeUndefined();
    expect(lint(r.diagnostics).filter((d) => d.rule === "conditional-basic-or-public")).toEqual([
      { severity: "error", path: "resources.old.properties.condition", rule: "conditional-basic-or-public", line: 39 },
    ]);
  });
});
