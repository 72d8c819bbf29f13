// Issue 4, acceptance 8 (refresh): after an out-of-band change, `refresh` updates the state from
// live (the state file shows the change, serial bumped) and writes nothing to the cloud.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import {
  expectExit,
  livePolicy,
  resetStats,
  runCli,
  setPolicyOutOfBand,
  stats,
  useEmulatorWorkspace,
} from "./helpers.js";
import {
  addMember,
  bindingYaml,
  ep,
  getCalls,
  memberYaml,
  readStateFile,
  rp,
  setCalls,
  stackHead,
} from "./apply-helpers.js";

const STACK =
  stackHead("refreshing") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  memberYaml("invoker", "churn", "roles/aiplatform.user", "user:bob@example.com");

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
  endpoints: [{ name: ep("churn"), policy: { bindings: [] } }],
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-refresh-");

describe("refresh", () => {
  it("records an out-of-band change in the state and writes nothing to the cloud", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "state.json");
    await writeFile(stackFile, STACK);
    expectExit(
      await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
      }),
      0,
    );
    const before = await readStateFile(statePath);

    // Someone adds a member to the binding the stack owns, outside converge.
    const changed = await setPolicyOutOfBand(ws.emu, rp("nightly"), (p) =>
      addMember(p, "roles/gkebackup.viewer", "user:mallory@example.com"),
    );
    await resetStats(ws.emu);

    const r = await runCli(["refresh", "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
    expectExit(r, 0);
    const s = await stats(ws.emu);
    expect(setCalls(s)).toBe(0);
    expect(getCalls(s)).toBe(2);

    const after = await readStateFile(statePath);
    expect(after.serial).toBe(before.serial + 1);
    expect(after.lineage).toBe(before.lineage);
    const viewers = after.resources.find((x) => x.address === "viewers")!;
    expect(viewers.inputs.members).toEqual(["user:alice@example.com", "user:mallory@example.com"]);
    expect(viewers.outputs.members).toEqual(["user:alice@example.com", "user:mallory@example.com"]);
    expect(viewers.outputs.etag).toBe(changed.etag);
    // The untouched resource is unchanged.
    expect(after.resources.find((x) => x.address === "invoker")?.inputs).toEqual(
      before.resources.find((x) => x.address === "invoker")?.inputs,
    );
    // The cloud still has the out-of-band member: refresh never writes.
    expect((await livePolicy(ws.emu, rp("nightly"))).etag).toBe(changed.etag);
  });
});
