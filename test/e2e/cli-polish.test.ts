// Issue 13, item 7: what a reviewer notices. --target prints Terraform's "Resource targeting is in
// effect" warning; --replace of an unknown address is an error; refresh prints its drift without
// plan wording; help texts list only the options a command uses, with examples, and defaults as
// values. (Unbroken quoted values: test/e2e/show.test.ts.)
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, setPolicyOutOfBand, useEmulatorWorkspace } from "./helpers.js";
import { addMember, bindingYaml, rp, stackHead } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [{ name: rp("nightly"), policy: { bindings: [] } }],
};
const ws = useEmulatorWorkspace(SEED, "converge-cli-polish-");
const STACK =
  stackHead("polish") +
  bindingYaml("viewers", "nightly", "roles/gkebackup.viewer", ["user:alice@example.com"]) +
  bindingYaml("admins", "nightly", "roles/gkebackup.admin", ["user:oncall@example.com"]);

async function cli(...args: string[]) {
  const stackFile = join(ws.dir, "stack.yaml");
  await writeFile(stackFile, STACK);
  return runCli([...args, "-f", stackFile, "--state", join(ws.dir, "polish.json")], { cwd: ws.dir, emulator: ws.emu });
}

describe("terminal polish", () => {
  it("--target prints the targeting warning", async () => {
    const r = await cli("plan", "--target", "viewers");
    expectExit(r, 0);
    expect(r.stderr).toContain("Warning: Resource targeting is in effect");
    expect(r.stderr).toContain("--target is not for routine use");
    expect(r.stdout).toContain("Plan: 0 to import, 1 to add, 0 to change, 0 to destroy.");
  });

  it("--replace of an unknown address is an error", async () => {
    const r = await cli("plan", "--replace", "nosuch");
    expectExit(r, 1);
    expect(r.stderr).toContain("--replace nosuch: no resource has this address");
  });

  it("refresh prints its drift in its own words, not a plan's", async () => {
    expectExit(await cli("apply", "--auto-approve"), 0);
    await setPolicyOutOfBand(ws.emu, rp("nightly"), (p) =>
      addMember(p, "roles/gkebackup.viewer", "user:mallory@example.com"),
    );
    const r = await cli("refresh");
    expectExit(r, 0);
    expect(r.stdout).toContain(
      "converge read the live policies and records these changes, made outside of converge, in the state:",
    );
    expect(r.stdout).toContain('"user:mallory@example.com"');
    expect(r.stdout).not.toMatch(/actions below|Plan:|will be/);
  });

  it("help lists only the options a command uses, with examples, and defaults as values", async () => {
    const help = async (...args: string[]) => (await runCli([...args, "--help"], { cwd: ws.dir })).stdout;
    const plan = await help("plan");
    expect(plan).toContain("(default: stack.yaml)");
    expect(plan).toMatch(/--parallelism <n> +concurrent cloud calls \(default: 10\)/);
    expect(plan).not.toMatch(/default: "|default: \[\]/);
    expect(plan).not.toContain("--lock-timeout"); // plan takes no lock
    // gone: the benchmark's per-resource baseline is in bench/per-resource
    expect(plan).not.toContain("--iam-batching");
    expect(plan).toContain("Examples:\n  converge plan");
    const graph = await help("graph");
    for (const unused of ["--state", "--parallelism", "--lock-timeout"]) expect(graph).not.toContain(unused);
    expect(await help("apply")).toContain("Examples:\n  converge apply");
  });
});
