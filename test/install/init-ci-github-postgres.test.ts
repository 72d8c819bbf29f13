// converge init --ci github: the workflow it writes, run as GitHub runs it (test/install/workflow.ts)
// against the emulator over loopback, with the state on the run's PostgreSQL server as the
// workflow asks (backend postgres, DATABASE_URL). Two pushes to a pull request plan and leave one
// comment, updated in place, and the plan as the artifact; the merge applies exactly that plan,
// as CONVERGE_ACTOR, and a plan sealed with another key is refused.
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { useFreshDatabase } from "../postgres/helpers.js";
import { expectExit, runCli, startSeededEmulator, useTempDir, world } from "../e2e/helpers.js";
import { checkout, readWorkflow, runJob, type JobRun } from "./workflow.js";

const ws = useTempDir("converge-init-ci-");
const fresh = useFreshDatabase("init_ci");
const FAKE_GH = join(import.meta.dirname, "fake-gh.mjs");

const output = (r: JobRun) => r.steps.map((s) => `--- ${s.step} (exit ${s.code})\n${s.output}`).join("\n");

describe("converge init --ci github: the workflow's steps", () => {
  it("plan on each push to the pull request (one comment, updated), apply the reviewed plan on merge", async () => {
    const repo = join(ws.dir, "repo");
    expectExit(await runCli(["init", repo, "--ci", "github"]), 0);
    // The workflow's header: both jobs share the state through PostgreSQL.
    const stack = join(repo, "stack.yaml");
    const yaml = await readFile(stack, "utf8");
    await writeFile(stack, yaml.replace("# backend: { type: postgres }", "backend: { type: postgres }"));
    const wf = readWorkflow(join(repo, ".github", "workflows", "converge.yml"));
    expect(Object.keys(wf.on).sort()).toEqual(["pull_request", "push"]);
    expect(wf.permissions).toMatchObject({ "id-token": "write", "pull-requests": "write" });

    const seed = parse(await readFile(join(repo, "cloud.seed.yaml"), "utf8")) as EmulatorWorld;
    const emu = await startSeededEmulator(seed);
    try {
      const gh = join(ws.dir, "gh-state.json");
      const artifact = join(ws.dir, "artifact");
      await writeFile(gh, JSON.stringify({ comments: [], pr: 7, head: "abc123", run: 42, artifact, calls: [] }));
      const binDir = join(ws.dir, "bin");
      await mkdir(binDir);
      await symlink(FAKE_GH, join(binDir, "gh"));
      const values = (key: string) => ({
        "secrets.CONVERGE_PLAN_KEY": key,
        "secrets.CONVERGE_DATABASE_URL": fresh.db.url,
        "github.token": "token",
        "github.event.pull_request.number": "7",
        "github.actor": "octocat",
        "vars.GCP_WORKLOAD_IDENTITY_PROVIDER != ''": "false",
      });
      const env = {
        PATH: `${binDir}:${process.env.PATH}`,
        FAKE_GH_STATE: gh,
        GITHUB_REPOSITORY: "acme/iam",
        GITHUB_SHA: "def456",
        GITHUB_SERVER_URL: "https://github.com",
        GITHUB_RUN_ID: "4242",
        CLOUDNATIVE_EMULATOR_HOST: emu.hostPort,
      };

      // Without the key (not set, or a pull request from a fork): no plan, no comment.
      checkout(repo, join(ws.dir, "no-key"));
      const unsealed = await runJob(wf, "plan", join(ws.dir, "no-key"), values(""), env, artifact);
      expect(unsealed.failed).toBe(true);
      const refusal = expect.stringContaining("CONVERGE_PLAN_KEY is not set") as unknown;
      expect(unsealed.steps.at(-1)).toMatchObject({ step: "Plan", output: refusal });

      for (const push of ["push1", "push2"]) {
        checkout(repo, join(ws.dir, push));
        const plan = await runJob(wf, "plan", join(ws.dir, push), values("the-key"), env, artifact);
        expect(plan.failed, output(plan)).toBe(false);
      }
      const state = JSON.parse(await readFile(gh, "utf8")) as { comments: { body: string }[]; calls: string[] };
      expect(state.comments).toHaveLength(1);
      expect(state.comments[0]!.body).toMatch(/^<!-- converge-plan -->\n## converge plan: `repo`/);
      expect(state.comments[0]!.body).toContain("**0 to import, 2 to add, 0 to change, 0 to destroy.**");
      expect(state.calls.filter((c) => c.includes("-X PATCH"))).toHaveLength(1);
      const planJson = JSON.parse(await readFile(join(artifact, "plan.json"), "utf8")) as { resource_changes: [] };
      expect(planJson.resource_changes).toHaveLength(2);
      // The review page is in the artifact, and the comment links to the run that holds it.
      const page = await readFile(join(artifact, "review.html"), "utf8");
      expect(page).toMatch(/^<!doctype html>/);
      expect(page).toContain('<script type="application/json" id="review-data">');
      const link = "[The access review page](https://github.com/acme/iam/actions/runs/4242#artifacts)";
      expect(state.comments[0]!.body).toContain(link);

      // The merge, with the wrong key: refused, nothing written.
      checkout(repo, join(ws.dir, "merge-bad"));
      const bad = await runJob(wf, "apply", join(ws.dir, "merge-bad"), values("another-key"), env, artifact);
      expect(bad.failed).toBe(true);
      expect(bad.steps.at(-1)!.step).toBe("Apply");
      expect(bad.steps.at(-1)!.output).toContain("signature");

      checkout(repo, join(ws.dir, "merge"));
      const apply = await runJob(wf, "apply", join(ws.dir, "merge"), values("the-key"), env, artifact);
      expect(apply.failed, output(apply)).toBe(false);
      expect(apply.steps.at(-1)!.output).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
      const live = await world(emu);
      expect(JSON.stringify(live.restorePlans)).toContain("group:sre@example.com");
      expect(JSON.stringify(live.endpoints)).toContain("serviceAccount:data-eng@my-project.iam.gserviceaccount.com");
      const history = await runCli(["state", "history"], { cwd: join(ws.dir, "merge"), env: fresh.db.env });
      expectExit(history, 0);
      expect(history.stdout).toContain("octocat");
    } finally {
      await emu.close();
    }
  }, 300_000);
});
