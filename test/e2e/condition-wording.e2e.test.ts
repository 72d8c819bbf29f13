// A condition whose description was edited out of band: Google's identity of a binding is its role
// and whole condition, so the plan removes the edited binding and adds the stack's, but the
// members keep the access an identical expression gives. `plan` and `plan --json` say that the
// condition's wording changes, and count nobody as losing or gaining access. Through the built
// CLI against the emulator. Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AccessDelta, EmulatorWorld } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const EXPR = 'request.time < timestamp("2031-01-01T00:00:00Z")';
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("weekly"),
      policy: {
        version: 3,
        bindings: [
          {
            role: "roles/gkebackup.viewer",
            members: ["user:a@example.com", "user:b@example.com"],
            condition: { title: "until-2031", description: "edited by hand", expression: EXPR },
          },
        ],
      },
    },
  ],
};

const STACK = `${stackHead("wording")}  whole:
    type: cloudnative:backup/v1:RestorePlanIamPolicy
    properties:
      name: weekly
      bindings:
        - role: roles/gkebackup.viewer
          members: ["user:a@example.com", "user:b@example.com"]
          condition: { title: until-2031, description: Reviewed in 2030, expression: '${EXPR}' }
`;

const ws = useEmulatorWorkspace(SEED, "converge-cond-wording-");

describe("a condition whose description was edited out of band", { timeout: 60_000 }, () => {
  it("is a change of the condition's wording, not access lost and granted, in plan and plan --json", async () => {
    await writeFile(join(ws.dir, "stack.yaml"), STACK);
    const human = await runCli(["plan", "--no-color"], { cwd: ws.dir, emulator: ws.emu });
    expectExit(human, 0);
    expect(human.stdout).toContain("Access: 0 granted, 0 revoked");
    expect(human.stdout).not.toContain("loses");
    expect(human.stdout).toContain(
      `~ roles/gkebackup.viewer on ${rp("weekly")}: condition "until-2031" description "edited by hand" → ` +
        `"Reviewed in 2030", same expression: user:a@example.com, user:b@example.com keep access (whole)`,
    );

    const json = await runCli(["plan", "--json"], { cwd: ws.dir, emulator: ws.emu });
    expectExit(json, 0);
    const out = JSON.parse(json.stdout) as { converge: { access_changes?: AccessDelta } };
    expect(validate("terraform-plan.schema.json", out)).toEqual([]);
    const delta = out.converge.access_changes;
    expect(delta?.changes).toEqual([]);
    expect(delta?.condition_changes).toEqual([
      {
        object: rp("weekly"),
        kind: "restorePlan",
        role: "roles/gkebackup.viewer",
        principals: ["user:a@example.com", "user:b@example.com"],
        before: { title: "until-2031", description: "edited by hand", expression: EXPR },
        after: { title: "until-2031", description: "Reviewed in 2030", expression: EXPR },
        addresses: ["whole"],
      },
    ]);
  });
});
