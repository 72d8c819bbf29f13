// A whole-policy resource's own inputs at load: its bindings' and audit configs' members are
// checked where they are written (file:line:column), before any network call.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { STACK_HEAD } from "../fixtures/builders.js";

const FILE = "/virtual/stack.yaml";
const stack = (auditConfigs: string) => `${STACK_HEAD}resources:
  whole:
    type: cloudnative:backup/v1:RestorePlanIamPolicy
    properties:
      name: nightly
      bindings:
        - role: roles/x.viewer
          members: [user:a@example.com, bob]
      auditConfigs:
${auditConfigs}`;

describe("RestorePlanIamPolicy inputs at load", () => {
  it("a bad member of a binding and a bad exempted member are errors at their positions", () => {
    const r = parseStack(
      FILE,
      stack(`        - service: allServices
          auditLogConfigs:
            - logType: DATA_READ
              exemptedMembers: [user:ok@example.com, "alice@example.com"]
`),
    );
    const errors = r.diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => ({ line: d.line, column: d.column, address: d.address, summary: d.summary }));
    expect(errors).toEqual([
      { line: 12, column: 41, address: "whole", summary: expect.stringContaining("whole: ") },
      { line: 17, column: 54, address: "whole", summary: expect.stringContaining('"alice@example.com"') },
    ]);
  });

  it("valid audit configs load", () => {
    const r = parseStack(
      FILE,
      stack(`        - service: allServices
          auditLogConfigs: [{ logType: ADMIN_READ }, { logType: DATA_WRITE, exemptedMembers: [group:ops@example.com] }]
`).replace(", bob]", "]"),
    );
    expect(r.diagnostics).toEqual([]);
  });
});

describe("EndpointIamPolicy inputs at load", () => {
  it("auditConfigs is refused at its position, saying that aiplatform v1beta1's Policy has none", () => {
    const yaml = stack(`        - service: allServices
          auditLogConfigs: [{ logType: DATA_READ }]
`)
      .replace("cloudnative:backup/v1:RestorePlanIamPolicy", "cloudnative:aiplatform/v1beta1:EndpointIamPolicy")
      .replace(", bob]", "]");
    const r = parseStack(FILE, yaml);
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    expect(errors).toHaveLength(1);
    const path = "resources.whole.properties.auditConfigs";
    expect(errors[0]).toMatchObject({ file: FILE, line: 13, column: 7, path });
    const text = `${errors[0]!.summary} ${errors[0]!.detail ?? ""}`;
    expect(text).toMatch(/aiplatform v1beta1's Policy has no auditConfigs/);
  });
});
