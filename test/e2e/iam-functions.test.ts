// Issue 16: getRestorePlanIamPolicy and getEndpointIamPolicy in `fn::invoke` through the built CLI
// against a seeded emulator: outputs from the live policy (etag, bindings, auditConfigs, version),
// a missing object is an error naming it, a wrong argument an error at its position; none of them
// writes. Needs `npm run build`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, livePolicy, resetStats, runCli, stackTraceLines, stats, useEmulatorWorkspace } from "./helpers.js";
import { getCalls, setCalls } from "./apply-helpers.js";
import { CAROL, DAN, ENDPOINT, FOREIGN_AUDIT, RESTORE_PLAN, familySeed, foreignPolicy } from "./iam-family-helpers.js";

const ws = useEmulatorWorkspace(familySeed(["nightly", "churn"]), "converge-iam-functions-");

const HEAD = "name: fns\nprovider:\n  project: my-project\n  location: us-central1\n";

async function run(file: string, text: string, ...args: string[]) {
  const path = join(ws.dir, `${file}.yaml`);
  await writeFile(path, text);
  return runCli([...args, "-f", path, "--state", join(ws.dir, `${file}.json`)], { cwd: ws.dir, emulator: ws.emu });
}

const STACK = `${HEAD}variables:
  rp:
    fn::invoke:
      function: ${RESTORE_PLAN.fn}
      arguments:
        restorePlanId: nightly
        location: us-central1
  ep:
    fn::invoke:
      function: ${ENDPOINT.fn}
      arguments:
        endpointId: churn
        location: us-central1
        project: my-project
resources: {}
outputs:
  rpEtag: \${rp.etag}
  rpBindings: \${rp.bindings}
  rpAudit: \${rp.auditConfigs}
  epEtag: \${ep.etag}
  epBindings: \${ep.bindings}
  epVersion: \${ep.version}
`;

describe("the IAM policy functions", { timeout: 90_000 }, () => {
  it("read the live policies of a restore plan and an endpoint into outputs, without writing", async () => {
    await resetStats(ws.emu);
    const apply = await run("read", STACK, "apply", "--auto-approve");
    expectExit(apply, 0);
    const out = await runCli(
      ["output", "--json", "-f", join(ws.dir, "read.yaml"), "--state", join(ws.dir, "read.json")],
      { cwd: ws.dir },
    );
    expectExit(out, 0);
    const values = JSON.parse(out.stdout) as Record<string, unknown>;
    const [rpLive, epLive] = await Promise.all([
      livePolicy(ws.emu, RESTORE_PLAN.full("nightly")),
      livePolicy(ws.emu, ENDPOINT.full("churn")),
    ]);
    expect(values.rpEtag).toBe(rpLive.etag);
    expect(values.epEtag).toBe(epLive.etag);
    expect(values.rpBindings).toEqual(foreignPolicy(RESTORE_PLAN).bindings);
    expect(values.epBindings).toEqual(foreignPolicy(ENDPOINT).bindings);
    expect(values.rpAudit).toEqual(FOREIGN_AUDIT);
    expect(values.epVersion).toBe(1);
    const st = await stats(ws.emu);
    expect(setCalls(st)).toBe(0);
    expect(getCalls(st)).toBeGreaterThanOrEqual(2);

    // The plan shows the outputs from the functions' results.
    const plan = await run("read-plan", STACK, "plan");
    expectExit(plan, 0);
    expect(plan.stdout).toContain(`+ rpEtag     = "${rpLive.etag}"`);
    expect(plan.stdout).toContain(`"${CAROL}"`);
    expect(plan.stdout).toContain(`"${DAN}"`);
  });

  it("a missing object is an error naming it, and nothing is written", async () => {
    await resetStats(ws.emu);
    for (const [fn, arg, id, full] of [
      [RESTORE_PLAN.fn, "restorePlanId", "nosuch", RESTORE_PLAN.full("nosuch")],
      [ENDPOINT.fn, "endpointId", "gone", ENDPOINT.full("gone")],
    ] as const) {
      const r = await run(
        "missing",
        `${HEAD}variables:\n  p:\n    fn::invoke:\n      function: ${fn}\n      arguments:\n        ${arg}: ` +
          `${id}\n        location: us-central1\nresources: {}\noutputs:\n  e: \${p.etag}\n`,
        "plan",
      );
      expectExit(r, 1);
      expect(r.stderr).toContain(`${full} does not exist`);
      expect(r.stderr).toMatch(/missing\.yaml:7:5: Error: p:/);
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    expect(setCalls(await stats(ws.emu))).toBe(0);
  });

  it("a wrong argument is an error at its position, before any call", async () => {
    await resetStats(ws.emu);
    const r = await run(
      "wrong",
      `${HEAD}variables:\n  p:\n    fn::invoke:\n      function: ${ENDPOINT.fn}\n      arguments:\n        ` +
        `endpointID: churn\n        location: us-central1\nresources: {}\noutputs:\n  e: \${p.etag}\n`,
      "plan",
    );
    expectExit(r, 1);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`wrong\.yaml:10:9: Error: variables\.p\["fn::invoke"\]\.arguments: unknown property "endpoi` +
          String.raw`ntID" \(did you mean "endpointId"\?\)`,
      ),
    );
    expect(r.stderr).toMatch(
      /wrong\.yaml:\d+:\d+: Error: variables\.p\["fn::invoke"\]\.arguments: missing required property "endpointId"/,
    );
    expect(r.stderr).toContain('at variables.p["fn::invoke"].arguments.endpointID');
    expect(stackTraceLines(r.stderr)).toEqual([]);

    const typo = await run(
      "typo",
      `${HEAD}variables:\n  p:\n    fn::invoke:\n      function: ${RESTORE_PLAN.fn}\n      arguments:\n     ` +
        `   restorePlanId: 7\n        location: us-central1\nresources: {}\n`,
      "plan",
    );
    expectExit(typo, 1);
    expect(typo.stderr).toMatch(/typo\.yaml:10:\d+: Error: .*restorePlanId/);
    expect(setCalls(await stats(ws.emu)) + getCalls(await stats(ws.emu))).toBe(0);
  });
});
