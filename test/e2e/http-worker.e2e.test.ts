// The CLI's HTTP worker thread end to end (src/cloud/worker-http.ts): an apply of 1,100 bindings
// on as many restore plans makes 2,200 requests, so the worker starts after the first 2,000 and
// sends the rest. The apply must end by itself (an idle worker holds no process), write each
// policy once, and leave a state the next plan finds unchanged. test/cloud/http.test.ts checks
// each request's behaviour both ways; this checks the built CLI and its bundled worker.
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { resetStats, runCli, stats, useEmulatorWorkspace, world } from "./helpers.js";
import { bindingYaml, count, M, membersOf, policyIn, readStateFile, rp, stackHead } from "./apply-helpers.js";

const N = 1_100;
const ids = Array.from({ length: N }, (_, i) => String(i).padStart(4, "0"));
const ROLE = "roles/gkebackup.viewer";
const MARKER = fileURLToPath(new URL("../support/thread-marker.mjs", import.meta.url));

const STACK =
  stackHead("http-worker") +
  ids.map((i) => bindingYaml(`b${i}`, `plan-${i}`, ROLE, [`user:u${i}@example.com`])).join("");
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ids.map((i) => ({
    name: rp(`plan-${i}`),
    policy: { bindings: [{ role: "roles/gkebackup.admin", members: ["user:owner@example.com"] }] },
  })),
};

const ws = useEmulatorWorkspace(SEED, "converge-http-worker-");

describe("the HTTP worker in the CLI", () => {
  it("an apply of 2,200 requests sends the last ones from the worker, ends by itself, and converges", async () => {
    const stackFile = join(ws.dir, "stack.yaml");
    const statePath = join(ws.dir, "state.json");
    const threads = join(ws.dir, "threads.txt");
    await writeFile(stackFile, STACK);
    await writeFile(threads, "");
    await resetStats(ws.emu);
    const run = (args: string[]) =>
      runCli([...args, "-f", stackFile, "--state", statePath], {
        cwd: ws.dir,
        emulator: ws.emu,
        nodeFlags: ["--import", MARKER],
        env: { CONVERGE_TEST_THREAD_MARKER: threads },
        timeoutMs: 120_000,
      });

    const applied = await run(["apply", "--auto-approve"]);
    expect(applied.code, applied.stderr + applied.stdout.slice(-2000)).toBe(0);
    expect(applied.stdout).toMatch(
      new RegExp(`^Apply complete! Resources: ${N} added, 0 changed, 0 destroyed\\.$`, "m"),
    );
    // One worker thread was started.
    expect(readFileSync(threads, "utf8").split("\n").filter(Boolean)).toHaveLength(1);
    const s = await stats(ws.emu);
    expect([count(s, M.rpGet), count(s, M.rpSet)]).toEqual([N, N]);
    const live = await world(ws.emu);
    for (const i of ids) expect(membersOf(policyIn(live, rp(`plan-${i}`)), ROLE)).toEqual([`user:u${i}@example.com`]);
    expect((await readStateFile(statePath)).resources).toHaveLength(N);

    // 1,100 reads: under the threshold, no worker; nothing to change.
    await writeFile(threads, "");
    const planned = await run(["plan"]);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toMatch(/^No changes\./m);
    expect(readFileSync(threads, "utf8")).toBe("");
  }, 180_000);
});
