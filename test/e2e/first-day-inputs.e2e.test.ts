// Inputs everywhere a first real stack needs them (issue 38, item 1): one stack for dev and prod
// with its project from an input (`provider.project: acme-${env}`), a --var-file shared with
// another stack (its other keys are warnings, and the plan is made), `validate` without any input
// value (as `terraform validate`), and one error per missing input, with no knock-on errors.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "acme-dev": { number: "111111111111" }, "acme-prod": { number: "222222222222" } },
  restorePlans: [
    { name: "projects/acme-dev/locations/us-central1/restorePlans/nightly", policy: { bindings: [] } },
    { name: "projects/acme-prod/locations/us-central1/restorePlans/nightly", policy: { bindings: [] } },
  ],
};

const stack = (project: string) => `name: day1
provider:
  project: ${project}
  location: us-central1
config:
  env:
    type: string
  readers:
    type: list
  token:
    type: string
    secret: true
    default: t0ken-default
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: \${readers}
`;

const ws = useEmulatorWorkspace(SEED, "converge-first-day-inputs-");

async function files(project: string, varFile: string): Promise<string> {
  const file = join(ws.dir, "stack.yaml");
  await writeFile(file, stack(project));
  await writeFile(join(ws.dir, "dev.yaml"), varFile);
  return file;
}

const cli = (args: string[]) => runCli(args, { cwd: ws.dir, emulator: ws.emu });

describe("inputs on the first day", () => {
  it(
    "a shared var file's other keys are warnings (the first three " + "named, the rest counted), and the plan is made",
    async () => {
      const file = await files(
        "acme-${env}",
        'env: dev\nreaders: ["user:a@example.com"]\nother1: 1\nother2: 2\nother3: 3\nother4: 4\nother5: 5\n',
      );
      const plan = await cli(["plan", "-f", file, "--var-file", "dev.yaml"]);
      expectExit(plan, 0);
      expect(plan.stdout).toContain("projects/acme-dev/locations/us-central1/restorePlans/nightly");
      expect(plan.stderr.match(/Warning: unknown input "other\d"/g)).toHaveLength(3);
      expect(plan.stderr).toContain("Warning: and 2 more unknown inputs in the --var-file files: other4, other5");
      expectExit(await cli(["validate", "-f", file, "--var-file", "dev.yaml"]), 0);
    },
  );

  it('warnings then a later error: no count says "0 errors" before the error comes', async () => {
    const file = await files("acme-${env}", 'env: stage\nreaders: ["user:a@example.com"]\nother1: 1\nother2: 2\n');
    const plan = await cli(["plan", "-f", file, "--var-file", "dev.yaml"]);
    expectExit(plan, 1);
    expect(plan.stderr).toContain('Warning: unknown input "other2"');
    expect(plan.stderr).toContain("projects/acme-stage/locations/us-central1/restorePlans/nightly");
    expect(plan.stderr).not.toMatch(/\b0 error/);
  });

  it("provider.project takes an input: the same stack plans dev and prod", async () => {
    const file = await files("acme-${env}", 'readers: ["user:a@example.com"]\n');
    const prod = await cli(["plan", "-f", file, "--var-file", "dev.yaml", "--var", "env=prod"]);
    expectExit(prod, 0);
    expect(prod.stdout).toContain("projects/acme-prod/locations/us-central1/restorePlans/nightly");
    expect(prod.stdout).not.toContain("acme-dev");
  });

  it("validate needs no input values; plan gives one error per missing input", async () => {
    const file = await files("acme-${env}", "{}\n");
    const validate = await cli(["validate", "-f", file]);
    expectExit(validate, 0);
    expect(validate.stdout).toContain("Success!");
    const plan = await cli(["plan", "-f", file]);
    expectExit(plan, 1);
    expect(plan.stderr.match(/Error:/g)).toHaveLength(2);
    expect(plan.stderr).toContain('stack.yaml:6:3: Error: input "env" has no value');
    expect(plan.stderr).toContain('Error: input "readers" has no value');
  });

  it(
    "a provider field computed from a resource or a secret is refused " + "at load, positioned, with no knock-on error",
    async () => {
      for (const [project, message] of [
        [
          "acme-${viewers.name}",
          'provider.project may use only inputs and variables known when the stack loads, not "viewers"',
        ],
        ["acme-${token}", "provider.project cannot be computed from a secret"],
      ]) {
        const file = await files(project!, 'env: dev\nreaders: ["user:a@example.com"]\n');
        for (const command of ["validate", "plan"]) {
          const r = await cli([command, "-f", file, "--var-file", "dev.yaml"]);
          expectExit(r, 1);
          expect(r.stderr).toContain(`stack.yaml:3:12: Error: ${message}`);
          expect(r.stderr.match(/Error:/g)).toHaveLength(1);
        }
      }
    },
  );

  it("a saved plan carries its non-secret inputs: apply FILE asks only for the secret ones", async () => {
    const file = join(ws.dir, "saved.yaml");
    await writeFile(
      file,
      stack("acme-${env}").replace("    default: t0ken-default\n", "") + 'outputs:\n  who: "${token}"\n',
    );
    await writeFile(join(ws.dir, "dev.yaml"), 'env: dev\nreaders: ["user:saved@example.com"]\n');
    const secret = { CONVERGE_VAR_token: "s3cret-t0ken" };
    const plan = await runCli(["plan", "-f", file, "--var-file", "dev.yaml", "--out", "day1.plan"], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: secret,
    });
    expectExit(plan, 0);
    expect(plan.stdout).toContain("To perform exactly these actions, run: converge apply day1.plan");
    expect(plan.stdout).toContain("give the secret one again: --var token=… (or CONVERGE_VAR_token)");
    const without = await cli(["apply", "day1.plan", "-f", file]);
    expectExit(without, 1);
    expect(without.stderr.match(/Error:/g)).toHaveLength(1);
    expect(without.stderr).toContain('Error: input "token" has no value');
    const applied = await runCli(["apply", "day1.plan", "-f", file], { cwd: ws.dir, emulator: ws.emu, env: secret });
    expectExit(applied, 0);
    expect(applied.stdout).toContain("Apply complete!");
  });
});
