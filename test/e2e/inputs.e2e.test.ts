// Issue 18: one stack for every environment. The same stack applied with two --var-files to two
// state files (--state) makes the two expected worlds, and so it does in two workspaces; input
// errors are positioned on the command line's output.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, stats, totalRequests, useEmulatorWorkspace, world } from "./helpers.js";
import { BINDING_T, membersOf, policyIn, rp } from "./apply-helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    { name: rp("dev-nightly"), policy: { bindings: [] } },
    {
      name: rp("prod-nightly"),
      policy: { bindings: [{ role: "roles/gkebackup.admin", members: ["group:platform@example.com"] }] },
    },
  ],
};

const STACK = `name: access
provider:
  project: my-project
  location: us-central1
config:
  env:
    type: string
    description: dev or prod
  viewers:
    type: list
  admin:
    type: string
    default: group:platform@example.com
resources:
  viewing:
    type: ${BINDING_T}
    properties:
      name: \${env}-nightly
      role: roles/gkebackup.viewer
      members: \${viewers}
  administering:
    type: ${BINDING_T}
    properties:
      name: \${env}-nightly
      role: roles/gkebackup.admin
      members: ["\${admin}"]
`;

const ws = useEmulatorWorkspace(SEED, "converge-inputs-");

describe("one stack, two environments", () => {
  it("applies the same stack with two --var-files to two states and makes the two worlds", async () => {
    const stack = join(ws.dir, "stack.yaml");
    await writeFile(stack, STACK);
    await writeFile(join(ws.dir, "dev.yaml"), "env: dev\nviewers: [user:alice@example.com, user:bob@example.com]\n");
    await writeFile(join(ws.dir, "prod.json"), JSON.stringify({ env: "prod", viewers: ["group:sre@example.com"] }));
    const run = (args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu });
    expectExit(
      await run(["apply", "--auto-approve", "-f", stack, "--state", "dev.state.json", "--var-file", "dev.yaml"]),
      0,
    );
    expectExit(
      await run([
        "apply",
        "--auto-approve",
        "-f",
        stack,
        "--state",
        "prod.state.json",
        "--var-file",
        "prod.json",
        "--var",
        "admin=group:oncall@example.com",
      ]),
      0,
    );
    const w = await world(ws.emu);
    expect(membersOf(policyIn(w, rp("dev-nightly")), "roles/gkebackup.viewer")).toEqual([
      "user:alice@example.com",
      "user:bob@example.com",
    ]);
    expect(membersOf(policyIn(w, rp("dev-nightly")), "roles/gkebackup.admin")).toEqual(["group:platform@example.com"]);
    expect(membersOf(policyIn(w, rp("prod-nightly")), "roles/gkebackup.viewer")).toEqual(["group:sre@example.com"]);
    expect(membersOf(policyIn(w, rp("prod-nightly")), "roles/gkebackup.admin")).toEqual(["group:oncall@example.com"]);
    // Each environment is now in sync with its own inputs; the environment variable counts too.
    const again = await runCli(["plan", "-f", stack, "--state", "dev.state.json", "--var-file", "dev.yaml"], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expectExit(again, 0);
    expect(again.stdout).toContain("No changes");
    const env = await runCli(
      ["plan", "-f", stack, "--state", "prod.state.json", "--var-file", "prod.json", "--detailed-exitcode"],
      { cwd: ws.dir, emulator: ws.emu, env: { CONVERGE_VAR_admin: "group:oncall@example.com" } },
    );
    expect(env.stdout).toContain("No changes");
  });

  it("applies the same stack to two workspaces with their own --var-files", async () => {
    const dir = join(ws.dir, "ws");
    await mkdir(dir);
    const stack = join(dir, "stack.yaml");
    await writeFile(
      stack,
      STACK.replace("name: access", "name: access-ws").replace(
        "default: group:platform@example.com",
        "default: group:admins@example.com",
      ),
    );
    await writeFile(join(dir, "dev.yaml"), "env: dev\nviewers: [user:carol@example.com]\n");
    await writeFile(join(dir, "prod.yaml"), "env: prod\nviewers: [group:auditors@example.com]\n");
    const run = (args: string[]) => runCli([...args, "-f", stack], { cwd: dir, emulator: ws.emu });
    expectExit(await run(["workspace", "new", "dev"]), 0);
    expectExit(await run(["workspace", "new", "prod"]), 0);
    expectExit(await run(["apply", "--auto-approve", "--workspace", "dev", "--var-file", "dev.yaml"]), 0);
    expectExit(await run(["apply", "--auto-approve", "--workspace", "prod", "--var-file", "prod.yaml"]), 0);
    const w = await world(ws.emu);
    expect(membersOf(policyIn(w, rp("dev-nightly")), "roles/gkebackup.viewer")).toEqual(["user:carol@example.com"]);
    expect(membersOf(policyIn(w, rp("prod-nightly")), "roles/gkebackup.viewer")).toEqual([
      "group:auditors@example.com",
    ]);
    expect(membersOf(policyIn(w, rp("prod-nightly")), "roles/gkebackup.admin")).toEqual(["group:admins@example.com"]);
    expect(
      existsSync(join(dir, "state", "access-ws.dev.json")) && existsSync(join(dir, "state", "access-ws.prod.json")),
    ).toBe(true);
    const again = await run(["plan", "--workspace", "prod", "--var-file", "prod.yaml"]);
    expect(again.stdout).toContain("No changes");
  });

  it("positions every input error: declaration, var file line, flag, environment variable", async () => {
    const stack = join(ws.dir, "stack.yaml");
    await writeFile(stack, STACK);
    await writeFile(join(ws.dir, "bad.yaml"), "env: dev\nviewers: user:alice@example.com\n");
    // validate needs no input values (as terraform validate); plan does.
    expectExit(await runCli(["validate", "-f", stack], { cwd: ws.dir }), 0);
    const missing = await runCli(["plan", "-f", stack], { cwd: ws.dir, emulator: ws.emu });
    expectExit(missing, 1);
    expect(missing.stderr).toContain(`stack.yaml:6:3: Error: input "env" has no value`);
    const bad = await runCli(["plan", "-f", stack, "--var-file", "bad.yaml", "--var", "nope=1"], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: { CONVERGE_VAR_admin: "x", CONVERGE_VAR_env: "" },
    });
    expectExit(bad, 1);
    expect(bad.stderr).toContain('bad.yaml:2:10: Error: input "viewers": expected a list, got a string');
    expect(bad.stderr).toContain('Error: unknown input "nope" (from --var nope=…)');
    const env = await runCli(["validate", "-f", stack, "--var", "env=dev"], {
      cwd: ws.dir,
      env: { CONVERGE_VAR_viewers: "alice" },
    });
    expectExit(env, 1);
    expect(env.stderr).toContain(
      'input "viewers": "alice" is not JSON; a list is given as JSON, e.g. ["a","b"] (from CONVERGE_VAR_viewers)',
    );
  });
});

describe("inputs nested too deep", () => {
  const DEEP = 'name: deep\nconfig:\n  l: { type: list }\noutputs:\n  o: "${l}"\n';
  const list = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

  it(
    "are refused from --var and CONVERGE_VAR_ as from a --var-file: " + "the same limit and message, naming the source",
    async () => {
      const stack = join(ws.dir, "deep.yaml");
      await writeFile(stack, DEEP);
      await writeFile(join(ws.dir, "deep-vars.yaml"), `l: ${list(100)}\n`);
      const fromFile = await runCli(["validate", "-f", stack, "--var-file", "deep-vars.yaml"], { cwd: ws.dir });
      expectExit(fromFile, 1);
      expect(fromFile.stderr).toContain(
        "deep-vars.yaml:1:67: Error: --var-file deep-vars.yaml: nested more than 64 levels deep",
      );
      const fromFlag = await runCli(["validate", "-f", stack, "--var", `l=${list(100)}`], { cwd: ws.dir });
      expectExit(fromFlag, 1);
      expect(fromFlag.stderr).toContain('Error: input "l": nested more than 64 levels deep (from --var l=…)');
      const fromEnv = await runCli(["validate", "-f", stack], { cwd: ws.dir, env: { CONVERGE_VAR_l: list(100) } });
      expectExit(fromEnv, 1);
      expect(fromEnv.stderr).toContain('Error: input "l": nested more than 64 levels deep (from CONVERGE_VAR_l)');
      expectExit(await runCli(["validate", "-f", stack, "--var", `l=${list(64)}`], { cwd: ws.dir }), 0);
    },
  );

  it(
    "thousands of levels deep: plan and validate exit 1 with the " + "message, no internal error, no cloud call",
    async () => {
      const stack = join(ws.dir, "deep.yaml");
      await writeFile(stack, DEEP);
      const before = totalRequests(await stats(ws.emu));
      for (const [command, depth] of [
        ["plan", 5_000],
        ["validate", 60_000],
      ] as const) {
        const state = command === "plan" ? ["--state", join(ws.dir, "deep.state.json")] : [];
        const r = await runCli([command, "-f", stack, ...state], {
          cwd: ws.dir,
          emulator: ws.emu,
          env: { CONVERGE_VAR_l: list(depth) },
        });
        expectExit(r, 1);
        expect(r.stderr).toContain('Error: input "l": nested more than 64 levels deep (from CONVERGE_VAR_l)');
        expect(r.stderr).not.toContain("internal error");
      }
      expect(totalRequests(await stats(ws.emu))).toBe(before);
      expect(existsSync(join(ws.dir, "deep.state.json"))).toBe(false);
    },
  );
});
