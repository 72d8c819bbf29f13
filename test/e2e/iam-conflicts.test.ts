// Issue 16: overlapping IAM resources are errors naming both, with where each is declared, before
// any network call when the overlap is visible in the stack's text, and before any write when it
// only appears once `${}` values are resolved at plan time. Built CLI against a seeded emulator.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  expectExit,
  resetStats,
  runCli,
  stackTraceLines,
  stats,
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";
import { setCalls } from "./apply-helpers.js";
import { ENDPOINT, RESTORE_PLAN, familySeed, foreignPolicy, liveView, expected } from "./iam-family-helpers.js";

const ws = useEmulatorWorkspace(familySeed(["nightly", "churn"]), "converge-iam-conflicts-");

const HEAD = "name: clash\nprovider:\n  project: my-project\n  location: us-central1\n";

async function write(file: string, text: string): Promise<string> {
  const path = join(ws.dir, file);
  await writeFile(path, text);
  return path;
}

const cli = (path: string, ...args: string[]) =>
  runCli([...args, "-f", path, "--state", `${path}.json`], { cwd: ws.dir, emulator: ws.emu });

/** Runs each command on the stack: exit 1 with `diagnostic`, the detail naming where `first` is
 *  declared (its line, column 3), no stack trace; and the emulator received no request. */
async function expectConflictBeforeAnyRequest(
  path: string,
  commands: string[][],
  diagnostic: RegExp,
  first: string,
  line: number,
): Promise<void> {
  await resetStats(ws.emu);
  for (const args of commands) {
    const r = await cli(path, ...args);
    expectExit(r, 1);
    expect(r.stderr).toMatch(diagnostic);
    expect(r.stderr).toContain(`"${first}" is declared at ${path}:${line}:3`);
    expect(stackTraceLines(r.stderr)).toEqual([]);
  }
  expect(totalRequests(await stats(ws.emu))).toBe(0);
}

// Line 6 declares "whole", line 11 "extra" (both at column 3).
const POLICY_AND_MEMBER = `${HEAD}resources:
  whole:
    type: ${RESTORE_PLAN.policyT}
    properties:
      name: nightly
      bindings: []
  extra:
    type: ${RESTORE_PLAN.memberT}
    properties:
      name: ${RESTORE_PLAN.full("nightly")}
      role: ${RESTORE_PLAN.r1}
      member: user:x@example.com
`;

// Line 6 declares "users", line 12 "whole": the endpoint policy is declared second.
const BINDING_AND_POLICY = `${HEAD}resources:
  users:
    type: ${ENDPOINT.bindingT}
    properties:
      name: ${ENDPOINT.full("churn")}
      role: ${ENDPOINT.r1}
      members: [user:x@example.com]
  whole:
    type: ${ENDPOINT.policyT}
    properties:
      name: churn
      bindings:
        - role: ${ENDPOINT.r2}
          members: [user:y@example.com]
`;

describe("conflicting IAM resources", { timeout: 90_000 }, () => {
  it(
    "a policy resource and a member on the same restore plan: plan and apply exit 1 naming " +
      "both with their positions, and the emulator receives no request",
    async () => {
      const path = await write("policy-member.yaml", POLICY_AND_MEMBER);
      const diagnostic = new RegExp(
        String.raw`policy-member\.yaml:11:3: Error: resources "whole" and "extra" both manage projects\/my-pr` +
          String.raw`oject\/locations\/us-central1\/restorePlans\/nightly`,
      );
      await expectConflictBeforeAnyRequest(path, [["plan"], ["apply", "--auto-approve"]], diagnostic, "whole", 6);
    },
  );

  it(
    "an endpoint binding declared before an endpoint policy on the same endpoint (full and short " +
      "names): the policy's position is the diagnostic's, the binding's in the detail",
    async () => {
      const path = await write("binding-policy.yaml", BINDING_AND_POLICY);
      const diagnostic = new RegExp(
        String.raw`binding-policy\.yaml:12:3: Error: resources "users" and "whole" both manage projects\/my-p` +
          String.raw`roject\/locations\/us-central1\/endpoints\/churn`,
      );
      await expectConflictBeforeAnyRequest(path, [["plan"]], diagnostic, "users", 6);
    },
  );

  it("a binding and a member on the same role through ${} values: caught at plan time, before any write", async () => {
    // Line 9 declares "viewers", line 15 "carol"; the member's object and role are interpolated.
    const path = await write(
      "interpolated.yaml",
      `${HEAD}variables:
  target:
    plan: nightly
resources:
  viewers:
    type: ${RESTORE_PLAN.bindingT}
    properties:
      name: \${target.plan}
      role: ${RESTORE_PLAN.r1}
      members: [user:bob@example.com]
  carol:
    type: ${RESTORE_PLAN.memberT}
    properties:
      name: \${viewers.name}
      role: \${viewers.role}
      member: user:carol@example.com
`,
    );
    const validate = await runCli(["validate", "-f", path], { cwd: ws.dir });
    expectExit(validate, 0);
    await resetStats(ws.emu);
    for (const args of [["plan"], ["apply", "--auto-approve"]]) {
      const r = await cli(path, ...args);
      expectExit(r, 1);
      expect(r.stderr).toMatch(
        /interpolated\.yaml:15:3: Error: .*"viewers".*"carol"|interpolated\.yaml:15:3: Error: .*"carol".*"viewers"/,
      );
      expect(r.stderr).toContain(`"viewers" is declared at ${path}:9:3`);
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    expect(setCalls(await stats(ws.emu))).toBe(0);
    expect((await liveView(ws.emu, RESTORE_PLAN.full("nightly"))).bindings).toEqual(
      expected(foreignPolicy(RESTORE_PLAN).bindings!),
    );
  });

  it(
    "two members of one restore plan and role, spelled differently (short and full name, " +
      "member case), are the same grant: an error before any request",
    async () => {
      // Line 6 declares "a", line 12 "b".
      const path = await write(
        "same-member.yaml",
        `${HEAD}resources:
  a:
    type: ${RESTORE_PLAN.memberT}
    properties:
      name: nightly
      role: ${RESTORE_PLAN.r1}
      member: user:Alice@example.com
  b:
    type: ${RESTORE_PLAN.memberT}
    properties:
      name: ${RESTORE_PLAN.full("nightly")}
      role: ${RESTORE_PLAN.r1}
      member: user:alice@EXAMPLE.com
`,
      );
      const diagnostic = new RegExp(
        String.raw`same-member\.yaml:12:3: Error: resources "a" and "b" both grant user:alice@EXAMPLE\.com ro` +
          String.raw`le roles\/gkebackup\.viewer on projects\/my-project\/locations\/us-central1\/restorePlans` +
          String.raw`\/nightly`,
      );
      await expectConflictBeforeAnyRequest(path, [["plan"]], diagnostic, "a", 6);
    },
  );

  it("non-overlapping resources on the same object (other role, other condition) plan without error", async () => {
    const path = await write(
      "fine.yaml",
      `${HEAD}resources:
  viewers:
    type: ${RESTORE_PLAN.bindingT}
    properties:
      name: nightly
      role: ${RESTORE_PLAN.r1}
      members: [user:bob@example.com]
  admin:
    type: ${RESTORE_PLAN.memberT}
    properties:
      name: nightly
      role: ${RESTORE_PLAN.r2}
      member: user:carol@example.com
  tempViewer:
    type: ${RESTORE_PLAN.memberT}
    properties:
      name: nightly
      role: ${RESTORE_PLAN.r1}
      member: user:carol@example.com
      condition: { title: later, expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' }
`,
    );
    const r = await cli(path, "plan");
    expectExit(r, 0);
    expect(r.stdout).toContain("Plan: 0 to import, 3 to add, 0 to change, 0 to destroy.");
  });
});
