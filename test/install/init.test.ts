// converge init: a starter stack that plans at once against the embedded emulator (YAML, or a
// TypeScript program with --typescript), a .gitignore for state and saved plans, and nothing
// overwritten.
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, expectExit, runCli, useTempDir } from "../e2e/helpers.js";

const ws = useTempDir("converge-init-");

describe("converge init", () => {
  it("writes a YAML stack that plans against the embedded emulator, and a .gitignore", async () => {
    const dir = join(ws.dir, "team-iam");
    const init = await runCli(["init"], { cwd: await mkdir(dir, { recursive: true }).then(() => dir) });
    expectExit(init, 0);
    expect(init.stdout).toBe(
      "Wrote stack.yaml, cloud.seed.yaml, .gitignore.\n" +
        "Next: npx converge plan   # what apply would change, against the embedded emulator\n",
    );
    const yaml = await readFile(join(dir, "stack.yaml"), "utf8");
    expect(yaml).toContain("\nname: team-iam\n");
    // yaml-language-server finds the package's schema from the stack's folder.
    const schema = /^# yaml-language-server: \$schema=(.*)$/m.exec(yaml)![1]!;
    expect(resolve(dir, schema)).toBe(join(REPO, "schemas", "stack.schema.json"));
    const ignored = (await readFile(join(dir, ".gitignore"), "utf8")).split("\n");
    expect(ignored).toEqual(expect.arrayContaining(["/state/", "*.plan"]));
    const plan = await runCli(["plan"], { cwd: dir, timeoutMs: 60_000 });
    expectExit(plan, 0);
    expect(plan.stdout).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
    const apply = await runCli(["apply", "--auto-approve"], { cwd: dir, timeoutMs: 60_000 });
    expect(apply.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    // The state and the emulator's world are under state/, which git ignores.
    expect(existsSync(join(dir, "state", "team-iam.json"))).toBe(true);
  });

  it("--typescript writes a program stack that imports the package by its name", async () => {
    const dir = join(ws.dir, "ts");
    await mkdir(join(dir, "node_modules"), { recursive: true });
    await symlink(REPO, join(dir, "node_modules", "converge-iam"), "dir");
    const init = await runCli(["init", "ts", "--typescript", "--name", "access"], { cwd: ws.dir });
    expectExit(init, 0);
    expect(init.stdout).toContain("Next: cd ts && npx converge plan -f stack.ts");
    expect(existsSync(join(dir, "stack.yaml"))).toBe(false);
    const plan = await runCli(["plan", "-f", "stack.ts"], { cwd: dir, timeoutMs: 60_000 });
    expectExit(plan, 0);
    expect(plan.stderr).toBe("");
    expect(plan.stdout).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
  });

  it("overwrites nothing, and adds its lines to an existing .gitignore", async () => {
    const dir = join(ws.dir, "existing");
    await mkdir(dir);
    await writeFile(join(dir, ".gitignore"), "node_modules/\n*.plan\n");
    expectExit(await runCli(["init", "--ci", "github"], { cwd: dir }), 0);
    expect(await readFile(join(dir, ".gitignore"), "utf8")).toBe(
      "node_modules/\n*.plan\n\n" +
        "# converge: local state (and the embedded emulator's world beside it) and saved plans\n/state/\n",
    );
    expect(existsSync(join(dir, ".github", "workflows", "converge.yml"))).toBe(true);
    const again = await runCli(["init", "--typescript", "--ci", "github"], { cwd: dir });
    expectExit(again, 1);
    expect(again.stderr).toContain(`Error: cloud.seed.yaml, .github/workflows/converge.yml already exist in ${dir}`);
    expect(existsSync(join(dir, "stack.ts"))).toBe(false);
  });

  it("--ci github beside an existing stack adds the workflow and keeps the stack", async () => {
    const dir = join(ws.dir, "later");
    expectExit(await runCli(["init", dir]), 0);
    const stack = await readFile(join(dir, "stack.yaml"), "utf8");
    await writeFile(join(dir, "stack.yaml"), `${stack}# mine\n`);
    const ci = await runCli(["init", "--ci", "github"], { cwd: dir });
    expectExit(ci, 0);
    expect(ci.stdout).toMatch(/^Kept stack.yaml, cloud.seed.yaml.\nWrote .github\/workflows\/converge.yml.\n/);
    expect(await readFile(join(dir, "stack.yaml"), "utf8")).toBe(`${stack}# mine\n`);
    expectExit(await runCli(["init", "--ci", "github"], { cwd: dir }), 1);
  });

  it("refuses a name that is not a stack name", async () => {
    const r = await runCli(["init", join(ws.dir, "bad"), "--name", "-x y"]);
    expectExit(r, 1);
    expect(r.stderr).toContain('--name "-x y" is not a stack name');
    expect(existsSync(join(ws.dir, "bad"))).toBe(false);
  });
});
