// Automation API scripts as users run them, each a process of its own: a script that only plans
// exits by itself (before, the embedded emulator the plan opened kept it running); under source
// maps (tsx, node --enable-source-maps) Stack.inline finds the script as its stack file, so the
// seed beside the script is found (before, converge's own src/sdk/call-site.ts was taken); and a
// relative seed is looked for in the `dir` option when one is given.
import { spawn } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, useTempDir } from "./helpers.js";

const tmp = useTempDir("converge-automation-scripts-");
const SEED = join(REPO, "examples", "quickstart", "cloud.seed.yaml");
const ENTRY = join(REPO, "dist", "index.js");

/** A script planning an inline program against the embedded emulator with `seed`; `opts` is the
 *  source of Stack.inline's options. */
const script = (seed: string, opts: string) => `import { Stack, RestorePlanIamBinding } from ${JSON.stringify(ENTRY)};
const stack = await Stack.inline("scripted", (s) => {
  const seed = ${JSON.stringify(seed)};
  s.provider = { project: "my-project", location: "us-central1", endpoint: "embedded", seed };
  const members = ["user:carol@example.com", "user:new@example.com"];
  new RestorePlanIamBinding("viewers", { name: "nightly", role: "roles/gkebackup.viewer", members });
}, ${opts});
const plan = await stack.plan();
const changes = plan.resource_changes.map((c) => c.change.action);
console.log(JSON.stringify({ errored: plan.errored, file: plan.stack.file, changes }));
`;

/** Runs `node ...args` in `cwd`; resolves its exit and output, or "hung" after `ms`. */
function run(
  args: string[],
  cwd: string,
  ms = 60_000,
): Promise<{ code: number | null | "hung"; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, CLOUDNATIVE_EMULATOR_HOST: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ code: "hung", stdout, stderr });
    }, ms);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("Automation API scripts", { timeout: 120_000 }, () => {
  it("a preview-only script exits by itself, and under source maps its seed beside it is found", async () => {
    const dir = join(tmp.dir, "beside");
    await mkdir(dir);
    await copyFile(SEED, join(dir, "cloud.seed.yaml"));
    await writeFile(join(dir, "preview.mjs"), script("cloud.seed.yaml", `{ dir: ${JSON.stringify(dir)} }`));
    await writeFile(join(dir, "preview.mts"), script("cloud.seed.yaml", `{ dir: ${JSON.stringify(dir)} }`));
    const tsx = join(REPO, "node_modules", "tsx", "dist", "cli.mjs");
    for (const args of [["preview.mjs"], ["--enable-source-maps", "preview.mjs"], [tsx, "preview.mts"]]) {
      const r = await run(args, dir);
      expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(0);
      const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
        errored: boolean;
        file: string;
        changes: string[];
      };
      expect(out).toEqual({ errored: false, file: join(dir, args.at(-1)!), changes: ["create"] });
    }
  });

  it("a relative seed is looked for in the dir option", async () => {
    const scripts = join(tmp.dir, "scripts");
    const work = join(tmp.dir, "work");
    await mkdir(scripts);
    await mkdir(work);
    await copyFile(SEED, join(work, "cloud.seed.yaml"));
    await writeFile(join(scripts, "elsewhere.mjs"), script("cloud.seed.yaml", `{ dir: ${JSON.stringify(work)} }`));
    const r = await run(["elsewhere.mjs"], scripts);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!).errored).toBe(false);
  });
});
