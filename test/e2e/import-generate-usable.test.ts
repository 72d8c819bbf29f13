// What import --generate writes can be used where it was written (issue 38, item 5): the
// editor's $schema is a relative path to the package's schema (no URL that does not exist), and
// an embedded emulator's provider block names its seed, relative to the stack, so the stack
// plans from any directory.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { expectExit, runCli, useTempDir } from "./helpers.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const SEED =
  `projects:\n  my-project: { number: "123456789012" }\nrestorePlans:\n  - name: ${RP}\n    policy: { ` +
  `bindings: [{ role: roles/gkebackup.viewer, members: ["user:a@example.com"] }] }\n`;

describe("import --generate", () => {
  const tmp = useTempDir("converge-generate-usable-");
  it("writes a relative $schema and a provider block that plans from anywhere", async () => {
    await writeFile(join(tmp.dir, "cloud.seed.yaml"), SEED);
    await mkdir(join(tmp.dir, "other"));
    const out = join("adopted", "gen.yaml");
    const gen = await runCli(
      ["import", "--generate", RP, "--endpoint", "embedded", "--seed", "cloud.seed.yaml", "--out", out],
      { cwd: tmp.dir },
    );
    expectExit(gen, 0);
    const text = await readFile(join(tmp.dir, out), "utf8");
    const schema = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)![1]!;
    expect(schema).not.toMatch(/^https?:/);
    expect(existsSync(resolve(dirname(join(tmp.dir, out)), schema))).toBe(true);
    expect((parse(text) as { provider: Record<string, string> }).provider).toEqual({
      project: "my-project",
      location: "us-central1",
      endpoint: "embedded",
      seed: "../cloud.seed.yaml",
    });
    const plan = await runCli(["plan", "--detailed-exitcode", "-f", join("..", out)], { cwd: join(tmp.dir, "other") });
    expectExit(plan, 2);
    expect(plan.stdout).toContain("1 to import, 0 to add, 0 to change, 0 to destroy");
  });
});
