// A saved plan records which state it was made from (the backend type, the workspace, and for the
// local backend the state file relative to the stack file's directory) inside its sealed content,
// and `apply FILE` refuses it for any other state before any cloud call, naming both. Before, a
// plan made for workspace dev applied to staging (neither had a state: the staleness check
// compared null with null), and a plan made for `--state A` applied to `--state B`.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld, Plan } from "../../src/generated/schemas.js";
import { sealPlan } from "../../src/plan/saved-plan.js";
import { expectExit, resetStats, runCli, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, readJson, rp, stackHead } from "./apply-helpers.js";

const VIEWER = "roles/gkebackup.viewer";
const IDS = ["ws", "path", "old", "same"];
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: IDS.map((id) => ({ name: rp(id), policy: { bindings: [] } })),
};

const ws = useEmulatorWorkspace(SEED, "converge-saved-plan-state-");

async function stackDir(id: string): Promise<{ dir: string; cli: (args: string[]) => ReturnType<typeof runCli> }> {
  const dir = join(ws.dir, id);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "stack.yaml"),
    stackHead(id) + bindingYaml("viewers", id, VIEWER, ["user:alice@example.com"]),
  );
  return { dir, cli: (args) => runCli(args, { cwd: dir, emulator: ws.emu }) };
}

describe("a saved plan is applied only to the state it was made from", () => {
  it("a plan made for workspace dev is refused in workspace staging, naming both, before any cloud call", async () => {
    const { dir, cli } = await stackDir("ws");
    expectExit(await cli(["workspace", "new", "dev"]), 0);
    expectExit(await cli(["workspace", "new", "staging"]), 0);
    expectExit(await cli(["workspace", "select", "default"]), 0);
    expectExit(await cli(["plan", "--workspace", "dev", "--out", "pdev.plan"]), 0);
    const saved = await readJson<Plan>(join(dir, "pdev.plan"));
    expect(saved.backend).toEqual({ type: "local", workspace: "dev", path: "state/ws.dev.json" });
    await resetStats(ws.emu);
    const r = await cli(["apply", "pdev.plan", "--workspace", "staging"]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`the saved plan pdev\.plan was made for workspace "dev" \(local state file state\/ws\.dev\.` +
          String.raw`json\), but apply would use workspace "staging" \(local state file state\/ws\.staging\.jso` +
          String.raw`n\)`,
      ),
    );
    expect(totalRequests(await stats(ws.emu))).toBe(0);
    expect(existsSync(join(dir, "state", "ws.staging.json"))).toBe(false);
    // The selected workspace (default) is another state too.
    expectExit(await cli(["apply", "pdev.plan"]), 1);
    expect(existsSync(join(dir, "state", "ws.json"))).toBe(false);
    // In its own workspace it applies.
    expectExit(await cli(["apply", "pdev.plan", "--workspace", "dev"]), 0);
    expect(existsSync(join(dir, "state", "ws.dev.json"))).toBe(true);
  });

  it("a plan made for --state A is refused for --state B, naming both files", async () => {
    const { dir, cli } = await stackDir("path");
    expectExit(await cli(["plan", "--state", "a/s.json", "--out", "a.plan"]), 0);
    await resetStats(ws.emu);
    const r = await cli(["apply", "a.plan", "--state", "b/s.json"]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`the saved plan a\.plan was made for workspace "default" \(local state file a\/s\.json\), b` +
          String.raw`ut apply would use workspace "default" \(local state file b\/s\.json\)`,
      ),
    );
    expect(totalRequests(await stats(ws.emu))).toBe(0);
    expect(existsSync(join(dir, "b", "s.json"))).toBe(false);
    // The same state given by an absolute path is the same state.
    expectExit(await cli(["apply", "a.plan", "--state", join(dir, "a", "s.json")]), 0);
  });

  it("a plan without the record (made by an older converge) is refused: plan again", async () => {
    const { dir, cli } = await stackDir("old");
    expectExit(await cli(["plan", "--out", "p.plan"]), 0);
    const p = await readJson<Plan>(join(dir, "p.plan"));
    delete p.backend;
    await writeFile(join(dir, "p.plan"), JSON.stringify(sealPlan(p, undefined), null, 2));
    await resetStats(ws.emu);
    const r = await cli(["apply", "p.plan"]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(
      /the saved plan p\.plan does not say which state it was made from: it was made by an older converge/,
    );
    expect(r.stderr).toMatch(/converge plan --out/);
    expect(totalRequests(await stats(ws.emu))).toBe(0);
  });

  it("the record is sealed: editing it breaks the digest", async () => {
    const { dir, cli } = await stackDir("same");
    expectExit(await cli(["plan", "--workspace", "default", "--out", "p.plan"]), 0);
    const text = await readFile(join(dir, "p.plan"), "utf8");
    const p = JSON.parse(text) as Plan;
    expect(p.backend).toEqual({ type: "local", workspace: "default", path: "state/same.json" });
    p.backend = { type: "local", workspace: "staging", path: "state/same.staging.json" };
    await writeFile(join(dir, "p.plan"), JSON.stringify(p, null, 2));
    const r = await cli(["apply", "p.plan"]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(/does not match its digest/);
  });
});
