// forEach instance addresses in messages are not wrapped in quotes of their own
// (`"viewers["sre"]"` reads as two strings): issue 38, item 5.
import { describe, expect, it } from "vitest";
import { parseStack } from "../../src/config/load.js";

describe("instance addresses in messages", () => {
  it("are written as they are, plain addresses still quoted", () => {
    const { diagnostics } = parseStack(
      "stack.yaml",
      `name: fe
provider: { project: p, location: us-central1 }
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    options: { forEach: { sre: "user:a@example.com", data: "user:b@example.com" } }
    properties: { name: nightly, role: roles/gkebackup.viewer, members: ["\${each.value}"] }
`,
    );
    expect(diagnostics.map((d) => d.summary)).toContain(
      'resources viewers["sre"] and viewers["data"] both manage role roles/gkebackup.viewer ' +
        "on projects/p/locations/us-central1/restorePlans/nightly",
    );
  });
});
