// `state list` of a stack with no state yet (never applied) or an empty one (destroyed) prints
// nothing and exits 0, as `terraform state list` does: scripts that loop over the addresses work on
// day one. The commands that need a resource (`state show`, `rm`, `mv`) still say there is no state.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeFile } from "node:fs/promises";
import { BINDING, LOCATION, PROJECT, RP } from "../fixtures/builders.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const ws = useEmulatorWorkspace(
  { projects: { [PROJECT]: { number: "123456789012" } }, restorePlans: [{ name: RP, policy: { bindings: [] } }] },
  "converge-state-list-empty-",
);
const cli = (args: string[]) => runCli(args, { emulator: ws.emu, cwd: ws.dir });
const STACK = `name: empty
provider:
  project: ${PROJECT}
  location: ${LOCATION}
resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:a@example.com]
`;

describe("state list of an empty state", { timeout: 60_000 }, () => {
  it("prints nothing and exits 0 before the first apply and after destroy; --json prints []", async () => {
    await writeFile(join(ws.dir, "stack.yaml"), STACK);
    for (const when of ["before apply", "after destroy"]) {
      if (when === "after destroy") {
        expectExit(await cli(["apply", "--auto-approve"]), 0);
        expectExit(await cli(["destroy", "--auto-approve"]), 0);
      }
      const list = await cli(["state", "list"]);
      expectExit(list, 0);
      expect(list.stdout, when).toBe("");
      expect(list.stderr, when).toBe("");
      const json = await cli(["state", "list", "--json"]);
      expectExit(json, 0);
      expect(JSON.parse(json.stdout), when).toEqual([]);
    }
    const show = await cli(["state", "show", "viewers"]);
    expectExit(show, 1);
  });
});
