// Members Google refuses are validation errors before any network call (SPEC section 1, "Anything
// else is a validation error before any network call"). A hostile tester's stack (e1) had members
// with a doubled dot, a trailing dot and an ESC in the email; `validate` and `plan` passed them and
// `apply` failed halfway on the server's INVALID_ARGUMENT, after another resource was applied.
// Here `validate` and `plan` must exit 1 with every bad member at FILE:LINE:COLUMN, naming it and
// what is expected, and the emulator must receive no request at all. Needs `npm run build`.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";

const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [{ name: "projects/my-project/locations/us-central1/restorePlans/nightly" }],
    endpoints: [{ name: "projects/my-project/locations/us-central1/endpoints/churn" }],
  },
  "converge-member-validation-",
);

// The e1 stack as the tester wrote it (the \u001b is a YAML escape: the member holds an ESC).
const E1 = String.raw`name: emails
provider: { project: my-project, location: us-central1 }
resources:
  good:
    type: cloudnative:aiplatform/v1beta1:EndpointIamMember
    properties: { name: churn, role: roles/aiplatform.viewer, member: "user:ok@example.com" }
  dots:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties: { name: nightly, role: roles/gkebackup.viewer, member: "user:a@b..com" }
  trail:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties: { name: nightly, role: roles/gkebackup.viewer, member: "user:a@b.com." }
  ctrl:
    type: cloudnative:backup/v1:RestorePlanIamMember
    properties: { name: nightly, role: roles/gkebackup.viewer, member: "user:x\u001b[2J@example.com" }
`;

// nul.yaml and ansi2.yaml's members (NUL, ESC, BEL), and one bad member of each other form.
const OTHERS = String.raw`name: others
provider: { project: my-project, location: us-central1 }
resources:
  viewers:
    type: cloudnative:backup/v1:RestorePlanIamBinding
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members:
        - "group:s\u0000re@example.com"
        - "group:sre@example.com\u001b[2J\u001b[31mEVIL"
        - "user:a\u0007@example.com"
        - "serviceAccount:-sa@p.iam.gserviceaccount.com."
        - "domain:example..com"
        - "deleted:user:a@b..com?uid=123"
        - "principal://iam.googleapis.com/locations/global/workforcePools/staff/subject/"
        - "principalSet://iam..googleapis.com/locations/global/workforcePools/staff/*"
        - "user:ok@example.com"
`;

async function run(stack: string, file: string, command: string[]) {
  await writeFile(join(ws.dir, file), stack);
  return runCli([...command, "-f", file], { cwd: ws.dir, emulator: ws.emu });
}

function expectErrors(
  stderr: string,
  file: string,
  want: [line: number, column: number, address: string, member: string, expected: RegExp][],
): void {
  expect(stackTraceLines(stderr)).toEqual([]);
  const lines = stderr.split("\n");
  for (const [line, column, address, member, expected] of want) {
    const where = `${file}:${line}:${column}: Error: ${address}: member ${member}`;
    const found = lines.find((l) => l.startsWith(where));
    expect(found, `no line starting ${where}:\n${stderr}`).toBeDefined();
    expect(found).toMatch(expected);
  }
  expect(stderr).toContain(`${want.length} errors, 0 warnings.`);
  // The escapes are shown, never the control characters themselves.
  expect(stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
}

const E1_ERRORS: Parameters<typeof expectErrors>[2] = [
  [9, 72, "dots", '"user:a@b..com"', /not an email address.*empty label/],
  [12, 72, "trail", '"user:a@b.com."', /not an email address.*empty label/],
  [15, 72, "ctrl", '"user:x\\x1b[2J@example.com"', /not an email address.*control character \(U\+001B\)/],
];

const OTHER_ERRORS: Parameters<typeof expectErrors>[2] = [
  [10, 11, "viewers", '"group:s\\x00re@example.com"', /not an email address.*control character \(U\+0000\)/],
  [
    11,
    11,
    "viewers",
    '"group:sre@example.com\\x1b[2J\\x1b[31mEVIL"',
    /not an email address.*control character \(U\+001B\)/,
  ],
  [12, 11, "viewers", '"user:a\\x07@example.com"', /not an email address.*control character \(U\+0007\)/],
  [13, 11, "viewers", '"serviceAccount:-sa@p.iam.gserviceaccount.com."', /not an email address.*empty label/],
  [14, 11, "viewers", '"domain:example..com"', /not a domain name.*empty label/],
  [15, 11, "viewers", '"deleted:user:a@b..com?uid=123"', /not a valid deleted principal.*empty label/],
  [
    16,
    11,
    "viewers",
    '"principal://iam.googleapis.com/locations/global/workforcePools/staff/subject/"',
    /not a valid principal identifier.*subject\/\{value\}/,
  ],
  [
    17,
    11,
    "viewers",
    '"principalSet://iam..googleapis.com/locations/global/workforcePools/staff/*"',
    /not a valid principalSet identifier.*empty label/,
  ],
];

describe("members Google refuses fail validation, before any network call", { timeout: 60_000 }, () => {
  it("validate: the e1 stack's members, each at its position", async () => {
    const r = await run(E1, "e1.yaml", ["validate"]);
    expectExit(r, 1);
    expect(r.stdout).not.toContain("Success");
    expectErrors(r.stderr, "e1.yaml", E1_ERRORS);
  });

  it("plan: the e1 stack fails the same way and writes no state", async () => {
    const r = await run(E1, "e1.yaml", ["plan", "--state", "state-e1.json"]);
    expectExit(r, 1);
    expectErrors(r.stderr, "e1.yaml", E1_ERRORS);
    expect(existsSync(join(ws.dir, "state-e1.json"))).toBe(false);
  });

  it("validate and plan: NUL, ESC and BEL, and a bad member of each other form", async () => {
    for (const command of [["validate"], ["plan", "--state", "state-others.json"]]) {
      const r = await run(OTHERS, "others.yaml", command);
      expectExit(r, 1);
      expectErrors(r.stderr, "others.yaml", OTHER_ERRORS);
    }
  });

  it("the emulator received no request at all", async () => {
    const s = await stats(ws.emu);
    expect(totalRequests(s), JSON.stringify(s.requests)).toBe(0);
  });
});
