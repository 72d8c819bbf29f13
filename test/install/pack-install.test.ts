// The package as a new user gets it, and the README as a new user follows it: `npm pack`, the
// tarball installed into an empty project outside the clone, then every shell block of the README
// run there in order (its `npm install --save-dev converge-iam` installs the tarball), each
// output block shown after a shell block checked against what that block printed. So the
// quickstart, `init`, a YAML plan against the embedded emulator, a stack.ts importing the
// package by its name, and the CI recipe run from outside the clone, as the README says.
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../e2e/helpers.js";
import { fences } from "./markdown.js";
import { bash } from "./shell.js";

const INSTALL = "npm install --save-dev converge-iam";
/** npm's own time for pack and install: generous, the cache may be cold on a new machine. */
const NPM_MS = 8 * 60_000;

interface Step {
  script: string;
  /** The output the README shows after it: runs of lines, "…" between them. */
  shown?: string[][];
}

/** The README's shell blocks, each with the output block that follows it, if any. */
function readmeSteps(): Step[] {
  const steps: Step[] = [];
  for (const f of fences(readFileSync(join(REPO, "README.md"), "utf8"))) {
    if (f.lang === "sh") steps.push({ script: f.body });
    else if (f.lang === "text" && steps.length && !steps.at(-1)!.shown) {
      const runs: string[][] = [[]];
      for (const l of f.body.replace(/\n$/, "").split("\n")) {
        if (l === "…") runs.push([]);
        else runs.at(-1)!.push(l);
      }
      steps.at(-1)!.shown = runs.filter((r) => r.length);
    }
  }
  return steps;
}

/** The environment of a user's shell: none of the npm run's own variables, no emulator override. */
function userEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  delete env.CLOUDNATIVE_EMULATOR_HOST;
  delete env.FORCE_COLOR;
  return { ...env, NO_COLOR: "1" };
}

const sh = (script: string, cwd: string, timeoutMs: number) => bash(script, cwd, userEnv(), timeoutMs);

let work: string;
let project: string;
let tarball: string;
const ran: { step: Step; code: number; output: string }[] = [];

beforeAll(
  async () => {
    if (!existsSync(join(REPO, "dist", "bundle", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` first");
    }
    work = await mkdtemp(join(tmpdir(), "converge-pack-"));
    // dist/ is built (npm test's pretest): no prepare run, the files as they are.
    const pack = await sh(`npm pack --ignore-scripts --pack-destination "${work}"`, REPO, NPM_MS);
    expect(pack.code, pack.output).toBe(0);
    const [file] = (await readdir(work)).filter((f) => f.endsWith(".tgz"));
    tarball = join(work, file!);
    project = join(work, "my-iam");
    await mkdir(project);
    await writeFile(join(project, "package.json"), `${JSON.stringify({ name: "my-iam", private: true }, null, 2)}\n`);
    for (const step of readmeSteps()) {
      const install = `npm install --save-dev --prefer-offline --no-audit --no-fund "${tarball}"`;
      const limit = step.script.includes(INSTALL) ? NPM_MS : 120_000;
      const r = await sh(step.script.replace(INSTALL, install), project, limit);
      ran.push({ step, ...r });
      if (r.code !== 0) break;
    }
  },
  2 * NPM_MS + 10 * 60_000,
);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the packed package, installed outside the clone, following the README", () => {
  it("runs every shell block of the README, in order, each exiting 0", () => {
    const steps = readmeSteps();
    expect(steps.length).toBeGreaterThanOrEqual(6);
    expect(steps[0]!.script).toContain(INSTALL);
    for (const r of ran) expect(r.code, `${r.step.script}\n${r.output}`).toBe(0);
    expect(ran).toHaveLength(steps.length);
  });

  it("installed the tarball itself (no link to the clone), whose command is converge", () => {
    const installed = join(project, "node_modules", "converge-iam");
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as unknown;
    expect(pkg).toMatchObject({ name: "converge-iam", bin: { converge: "bin/converge.js" } });
    expect(existsSync(join(project, "node_modules", ".bin", "converge"))).toBe(true);
  });

  it("prints what the README shows after each block", () => {
    for (const { step, output } of ran) {
      let from = 0;
      for (const run of step.shown ?? []) {
        const at = output.indexOf(run.join("\n"), from);
        const why = `the README shows, after \`${step.script.trim()}\`:\n${run.join("\n")}\n\nit printed:\n${output}`;
        expect(at, why).toBeGreaterThanOrEqual(0);
        from = at + run.join("\n").length;
      }
    }
  });

  it("planned the stack.ts, which imports converge-iam by name, with no error", () => {
    const ts = ran.find((r) => r.step.script.includes("plan -f stack.ts"));
    expect(ts?.output).toContain("Plan: 0 to import, 2 to add, 0 to change, 0 to destroy.");
    expect(ts?.output).not.toMatch(/Error|\\n/);
    expect(readFileSync(join(project, "program", "stack.ts"), "utf8")).toContain('from "converge-iam"');
  });
});
