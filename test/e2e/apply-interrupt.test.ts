// SPEC section 5 (with issue 4): Ctrl-C during apply finishes the in-flight calls, starts
// nothing new, saves the state and exits 130; the next apply converges from that state.
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { BIN, expectExit, livePolicy, runCli, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, clearFaults, membersOf, readStateFile, rp, setFaults, stackHead } from "./apply-helpers.js";

const STACK =
  stackHead("interrupt") +
  bindingYaml("a", "plan-a", "roles/gkebackup.viewer", ["user:a@example.com"]) +
  bindingYaml("b", "plan-b", "roles/gkebackup.viewer", ["user:b@example.com"], "    options:\n      dependsOn: [a]\n") +
  bindingYaml("c", "plan-c", "roles/gkebackup.viewer", ["user:c@example.com"], "    options:\n      dependsOn: [b]\n");

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["plan-a", "plan-b", "plan-c"].map((id) => ({ name: rp(id), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-apply-interrupt-");

describe("Ctrl-C during apply", () => {
  it("finishes the in-flight call, skips the rest, saves and exits 130; the next apply converges", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "state.json");
    await writeFile(stackFile, STACK);
    await setFaults(ws.emu, { latencyMs: 300, seed: 1 });
    const env = { ...process.env, NO_COLOR: "1", CLOUDNATIVE_EMULATOR_HOST: ws.emu.hostPort };
    const child = spawn(process.execPath, [BIN, "apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let sent = false;
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!sent && out.includes("a: Creation complete")) {
        sent = true;
        child.kill("SIGINT");
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const code = await new Promise<number | null>((res) => child.on("close", res));
    clearTimeout(timer);
    await clearFaults(ws.emu);

    expect(sent, out).toBe(true);
    expect(code, out).toBe(130);
    expect(out).toMatch(/Interrupt received/);
    const state = await readStateFile(statePath);
    const saved = state.resources.map((r) => r.address).sort();
    // a is done; b was in flight (or about to be) when the signal came; c never started.
    expect(saved[0]).toBe("a");
    expect(saved).not.toContain("c");
    expect(membersOf(await livePolicy(ws.emu, rp("plan-c")), "roles/gkebackup.viewer")).toEqual([]);
    // Whatever was written is in the state: the live grants match it.
    for (const id of ["a", "b"]) {
      expect(membersOf(await livePolicy(ws.emu, rp(`plan-${id}`)), "roles/gkebackup.viewer").length > 0).toBe(
        saved.includes(id),
      );
    }

    const again = await runCli(["apply", "--auto-approve", "-f", stackFile, "--state", statePath], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expectExit(again, 0);
    expect(again.stdout).toContain(`Apply complete! Resources: ${3 - saved.length} added, 0 changed, 0 destroyed.`);
    expect((await readStateFile(statePath)).resources).toHaveLength(3);
  });
});
