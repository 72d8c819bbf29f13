// options.import may use the stack's inputs (a secret one too): an import ID is resolved when the
// stack loads, as the properties are, so a grant whose member is a secret input can be adopted
// (import --from-pulumi writes such stacks). An ID naming no input is taken as written.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";
import { readInputs } from "../../src/config/var-files.js";

const FILE = "/virtual/stack.yaml";
const EP = "projects/my-project/locations/us-central1/endpoints/churn";
const stack = (importId: string) => `name: adopt
provider: { project: my-project, location: us-central1 }
config:
  who: { type: string, secret: true }
resources:
  other:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties: { name: ${EP}, role: roles/aiplatform.viewer, member: "user:x@example.com" }
  user:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties: { name: ${EP}, role: roles/aiplatform.user, member: "\${who}" }
    options:
      import: "${importId}"
`;

function load(text: string, env: NodeJS.ProcessEnv) {
  return parseStack(FILE, text, { inputs: readInputs({ env }).given });
}

describe("options.import with inputs", () => {
  it("is resolved when the stack loads, a secret input too", () => {
    const r = load(stack(`${EP} roles/aiplatform.user \${who}`), { CONVERGE_VAR_who: "user:dana@example.com" });
    expect(r.diagnostics).toEqual([]);
    const user = r.stack!.resources.get("user")!;
    expect(user.options.import).toBe(`${EP} roles/aiplatform.user user:dana@example.com`);
  });

  it("takes an ID whose ${…} names no input nor variable as written", () => {
    // import --generate writes live members and condition titles holding "\${" as they are.
    const id = `${EP} roles/aiplatform.user user:pay\${team}$$@example.com`;
    const r = load(stack(id), { CONVERGE_VAR_who: "user:dana@example.com" });
    expect(r.diagnostics).toEqual([]);
    expect(r.stack!.resources.get("user")!.options.import).toBe(id);
  });
});
