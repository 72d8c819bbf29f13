// CLOUDNATIVE_EMULATOR_HOST wins over the stack's endpoint: every plan says so on its first line,
// a failed one too (a plan that fails against an emulator the environment named, when the stack
// says google, is otherwise a puzzle). Issue 38, item 2.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-endpoint-override-");

describe("an endpoint the environment overrides", () => {
  it("is the first line of the plan, a failed one too", async () => {
    const file = join(ws.dir, "stack.yaml");
    const cli = () => runCli(["plan", "-f", file], { cwd: ws.dir, emulator: ws.emu });
    const first =
      `Target: emulator at ${ws.emu.hostPort} (from ` +
      `CLOUDNATIVE_EMULATOR_HOST), instead of the stack's endpoint (google)`;
    await writeFile(
      file,
      stackHead("override") + bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:a@example.com"]),
    );
    const ok = await cli();
    expectExit(ok, 0);
    expect(ok.stdout.split("\n")[0]).toBe(first);
    await writeFile(
      file,
      stackHead("override") + bindingYaml("viewers", "missing", "roles/gkebackup.viewer", ["user:a@example.com"]),
    );
    const failed = await cli();
    expectExit(failed, 1);
    expect(failed.stdout.split("\n")[0]).toBe(first);
    expect(failed.stderr).toContain("does not exist");
  });
});
