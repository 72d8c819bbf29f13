// A resource that failed is not also listed as skipped (issue 37, item 6). A resource whose type
// changes is replaced in two steps (the new one is made, then the old one removed); when making
// the new one fails, the removal depending on it does not run, but that is the same resource's
// failure, not a second resource skipped.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { bindingYaml, ep, memberYaml, membersOf, stackHead } from "./apply-helpers.js";
import { expectExit, livePolicy, runCli, useEmulatorWorkspace } from "./helpers.js";

const LOCKED = "projects/locked-project/locations/us-central1/restorePlans/audit";
const SEED: EmulatorWorld = {
  projects: {
    "my-project": { number: "123456789012" },
    // converge's token may read policies here, not set them.
    "locked-project": {
      number: "210987654321",
      callers: { "ci-token": "user:ci@example.com" },
      iamAdmins: ["user:admin@example.com"],
      iamViewers: ["user:ci@example.com"],
    },
  },
  restorePlans: [{ name: LOCKED, policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-failed-not-skipped-");
const TOKEN = { CLOUDNATIVE_ACCESS_TOKEN: "ci-token" };

describe("a replacement whose new half fails", () => {
  it("lists the resource as failed only, and leaves the old grant", async () => {
    const file = join(ws.dir, "stack.yaml");
    const cli = (args: string[]) => runCli([...args, "-f", file], { cwd: ws.dir, emulator: ws.emu, env: TOKEN });
    await writeFile(
      file,
      stackHead("swap") + memberYaml("x", "churn", "roles/aiplatform.user", "user:carol@example.com"),
    );
    expectExit(await cli(["apply", "--auto-approve"]), 0);
    // Same address, another type, on an object the token cannot write.
    await writeFile(
      file,
      stackHead("swap") + bindingYaml("x", LOCKED, "roles/gkebackup.viewer", ["user:bob@example.com"]),
    );
    const json = await cli(["apply", "--auto-approve", "--json"]);
    expectExit(json, 1);
    const result = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; result?: { failed: string[]; skipped: string[] } })
      .find((m) => m.type === "apply_result")!.result!;
    expect(result.failed).toEqual(["x"]);
    expect(result.skipped).toEqual([]);
    const text = await cli(["apply", "--auto-approve"]);
    expectExit(text, 1);
    expect(text.stdout + text.stderr).not.toMatch(/Skipped/);
    expect(membersOf(await livePolicy(ws.emu, ep("churn")), "roles/aiplatform.user")).toEqual([
      "user:carol@example.com",
    ]);
  });
});
