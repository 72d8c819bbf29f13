// Issue 13, items 6 and 7: `converge show PLANFILE` renders a saved plan exactly as `plan` did
// (text, --json, --view access, --format markdown); `converge show` renders the state with its
// values laid out as the plan lays them out; `state show` too; an 80-column terminal never breaks
// a quoted value (IDs copied from the screen must not contain line breaks).
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectExit, REPO, runCli } from "./helpers.js";
import { runInPty } from "./apply-helpers.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "converge-show-"));
  await cp(join(REPO, "examples", "quickstart"), dir, {
    recursive: true,
    filter: (src) => !src.includes(join("quickstart", "state")),
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The plan as printed, without what planning printed before it (its reads, and the refresh
 *  summary after the Target line) and the "Saved the plan" lines. */
const planBody = (stdout: string) =>
  stdout
    .slice(stdout.indexOf("Target: "))
    .replace(/\nRefreshed \d+ IAM polic(y|ies)\.\n\n/, "\n")
    .replace(/\n\nSaved the plan to: [^]*$/, "\n");

describe("converge show", () => {
  it("renders a saved plan exactly as plan did, in every form", async () => {
    const planned = await runCli(["plan", "--out", "saved.json"], { cwd: dir });
    expectExit(planned, 0);
    const shown = await runCli(["show", "saved.json"], { cwd: dir });
    expectExit(shown, 0);
    expect(shown.stdout).toBe(planBody(planned.stdout));
    expect(shown.stdout).toContain("Access: 4 granted, 1 revoked");
    for (const form of [["--json"], ["--view", "access"], ["--format", "markdown"]]) {
      const a = await runCli(["plan", ...form], { cwd: dir });
      const b = await runCli(["show", ...form, "saved.json"], { cwd: dir });
      expectExit(b, 0);
      if (form[0] === "--json") {
        const [pa, pb] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
        for (const p of [pa, pb]) {
          delete p.timestamp;
          delete p.converge.digest;
        }
        expect(pb).toEqual(pa);
        expect(pb.format_version).toBe("1.2");
      } else
        expect(b.stdout).toBe(form[0] === "--view" ? a.stdout.slice(a.stdout.indexOf("Access changes")) : a.stdout);
    }
  });

  it("refuses a saved plan that was edited", async () => {
    const { readFile, writeFile } = await import("node:fs/promises");
    const file = join(dir, "saved.json");
    await writeFile(
      join(dir, "edited.json"),
      (await readFile(file, "utf8")).replace("user:alice@example.com", "user:mallory@example.com"),
    );
    const r = await runCli(["show", "edited.json"], { cwd: dir });
    expectExit(r, 1);
    expect(r.stderr).toMatch(/does not match its digest/);
  });

  it("renders the state with nested values as the plan does, and state show too", async () => {
    expectExit(await runCli(["apply", "--auto-approve"], { cwd: dir }), 0);
    const r = await runCli(["show"], { cwd: dir });
    expectExit(r, 0);
    expect(r.stdout).toContain(
      '# restoreViewers:\nresource "cloudnative:backup/v1:RestorePlanIamBinding" "restoreViewers" {',
    );
    expect(r.stdout).toContain(
      '    members = [\n        "group:sre@example.com",\n        "user:alice@example.com",\n    ]',
    );
    expect(r.stdout).toContain('    condition = {\n        description = "Temporary on-call access"');
    expect(r.stdout).toMatch(/Outputs:\n\n[^]*lakeEndpoint = "thrift:\/\/10\.0\.0\.7:9083"/);
    const one = await runCli(["state", "show", "restoreAdmins"], { cwd: dir });
    expectExit(one, 0);
    expect(one.stdout).toContain(
      '    condition = {\n        description = "Temporary on-call access"\n        expression  = ' +
        '"request.time < timestamp(\\"2027-01-01T00:00:00Z\\")"\n        title       = "until-2027"\n    }',
    );
  });

  it("an 80-column terminal never breaks a quoted value", async () => {
    const pty = runInPty(["show"], { cwd: dir, cols: 80 });
    expect(await pty.exit).toBe(0);
    const id =
      '"projects/my-project/locations/us-central1/endpoints/churn roles/aiplatform.user ' +
      'serviceAccount:data-eng@my-project.iam.gserviceaccount.com"';
    expect(pty.text()).toContain(`    id      = ${id}`);
    const plan = runInPty(["plan", "--destroy"], { cwd: dir, cols: 80 });
    expect(await plan.exit).toBe(0);
    for (const line of plan.text().split("\n"))
      if ((line.match(/"/g) ?? []).length % 2 === 1)
        throw new Error(`a quoted value is broken across lines: ${line}\n${plan.text()}`);
    expect(plan.text()).toContain(id);
  });
});
