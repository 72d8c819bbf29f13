// The embedded emulator follows its seed (issue 38, item 4): editing the seed file after a first
// command starts the world again from it, and the plan says so on its Target line.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, runCli, useTempDir } from "./helpers.js";

const STACK = `name: follow
provider: { project: my-project, location: us-central1, endpoint: embedded, seed: cloud.seed.yaml }
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties: { name: nightly, role: roles/gkebackup.viewer, members: ["user:alice@example.com"] }
`;
const seed = (members: string[]) => `projects:
  my-project: { number: "123456789012" }
restorePlans:
  - name: projects/my-project/locations/us-central1/restorePlans/nightly
    policy: { bindings: [{ role: roles/gkebackup.viewer, members: ${JSON.stringify(members)} }] }
`;

describe("the embedded emulator", () => {
  const tmp = useTempDir("converge-seed-follow-");
  it("starts again from its seed when the seed changed, and the plan says so", async () => {
    await writeFile(join(tmp.dir, "stack.yaml"), STACK);
    await writeFile(join(tmp.dir, "cloud.seed.yaml"), seed(["user:alice@example.com"]));
    const cli = (args: string[]) => runCli(args, { cwd: tmp.dir });
    const first = await cli(["plan"]);
    expectExit(first, 0);
    expect(first.stdout.split("\n")[0]).toBe("Target: embedded emulator");
    expect((await cli(["plan"])).stdout.split("\n")[0]).toBe("Target: embedded emulator");
    await writeFile(join(tmp.dir, "cloud.seed.yaml"), seed(["user:alice@example.com", "user:mallory@example.com"]));
    const again = await cli(["plan"]);
    expectExit(again, 0);
    expect(again.stdout.split("\n")[0]).toBe(
      "Target: embedded emulator (started again from its seed, which changed since the last command)",
    );
    // The world is the new seed's: mallory, granted there, is revoked by the binding.
    expect(again.stdout).toContain("user:mallory@example.com loses roles/gkebackup.viewer");
    expect((await cli(["plan"])).stdout.split("\n")[0]).toBe("Target: embedded emulator");
  });
});
