// A binding created over members its role already has outside converge takes them over: the
// review says so, and that destroy will revoke them (issue 38, item 3). Destroy then does.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { bindingYaml, membersOf, policyIn, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";

const ROLE = "roles/gkebackup.viewer";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: { bindings: [{ role: ROLE, members: ["user:alice@example.com", "user:carol@example.com"] }] },
    },
  ],
};
const ws = useEmulatorWorkspace(SEED, "converge-binding-takeover-");

describe("a binding created over existing members", () => {
  it("says it takes them over and that destroy will revoke them; destroy does", async () => {
    const file = join(ws.dir, "stack.yaml");
    await writeFile(
      file,
      stackHead("takeover") +
        bindingYaml("viewers", "nightly", ROLE, ["user:alice@example.com", "user:bob@example.com"]),
    );
    const cli = (args: string[]) => runCli([...args, "-f", file], { cwd: ws.dir, emulator: ws.emu });
    const plan = await cli(["plan"]);
    expectExit(plan, 0);
    expect(plan.stdout).toContain(
      "  # takes over user:alice@example.com, already granted outside converge: destroy will revoke it",
    );
    // converge's own data about a change, beside Terraform's resource_changes.
    const json = JSON.parse((await cli(["plan", "--json"])).stdout) as {
      converge: { resource_changes: { address: string; after_taken_over?: string[] }[] };
    };
    expect(json.converge.resource_changes.find((c) => c.address === "viewers")!.after_taken_over).toEqual([
      "user:alice@example.com",
    ]);
    expectExit(await cli(["apply", "--auto-approve"]), 0);
    expectExit(await cli(["destroy", "--auto-approve"]), 0);
    expect(membersOf(policyIn(await world(ws.emu), rp("nightly")), ROLE)).toEqual([]);
  });
});
