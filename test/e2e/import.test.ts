// `converge import ADDRESS ID` through the built CLI against a seeded emulator (issue 5, SPEC
// section 6): what lands in the state, what the next plan says, and that every failure leaves
// the state and the cloud untouched. Needs `npm run build`.
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { BINDING, EP, LOCATION as LOC, MEMBER, PROJECT, RP } from "../fixtures/builders.js";
import { SET_EP, SET_RP } from "../support/emulator.js";
import {
  expectExit,
  livePolicy,
  resetStats,
  runCli,
  stackTraceLines,
  stats,
  type CliResult,
  useEmulatorWorkspace,
} from "./helpers.js";

const UNTIL_2027 = {
  title: "until-2027",
  description: "temporary access",
  expression: 'request.time < timestamp("2027-01-01T00:00:00Z")',
};

const SEED: EmulatorWorld = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [
    {
      name: RP,
      policy: {
        version: 3,
        bindings: [
          { role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] },
          { role: "roles/gkebackup.viewer", members: ["user:alice@example.com"], condition: UNTIL_2027 },
        ],
      },
    },
  ],
  endpoints: [
    {
      name: EP,
      policy: {
        bindings: [
          {
            role: "roles/aiplatform.user",
            members: ["user:dana@example.com", "serviceAccount:bot@my-project.iam.gserviceaccount.com"],
          },
        ],
      },
    },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-import-");

interface Res {
  type: string;
  properties: Record<string, unknown>;
  options?: Record<string, unknown>;
}

async function writeStack(file: string, resources: Record<string, Res>): Promise<string> {
  const path = join(ws.dir, file);
  await writeFile(path, stringify({ name: "team", provider: { project: PROJECT, location: LOC }, resources }));
  return path;
}

const viewers = (members: string[]): Res => ({
  type: BINDING,
  properties: { name: "nightly", role: "roles/gkebackup.viewer", members },
});
const temp = (members: string[]): Res => ({
  type: BINDING,
  properties: { name: RP, role: "roles/gkebackup.viewer", members, condition: UNTIL_2027 },
});
const dana: Res = {
  type: MEMBER,
  properties: { name: "churn", role: "roles/aiplatform.user", member: "user:dana@example.com" },
};

const cli = (args: string[]) => runCli(args, { emulator: ws.emu, cwd: ws.dir });

/** The lines of one resource's block in a human plan, from "  # ADDRESS …" to its closing brace. */
function block(stdout: string, address: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`  # ${address} `));
  if (start < 0) throw new Error(`no block for ${address} in:\n${stdout}`);
  const end = lines.indexOf("    }", start);
  return lines.slice(start, end + 1);
}

/** The marked lines (+, -, ~, +/-) of a block, trimmed with runs of spaces collapsed. */
function marked(lines: string[]): string[] {
  return lines.filter((l) => /^\s*(\+\/-|-\/\+|[+~-]) /.test(l)).map((l) => l.trim().replace(/\s+/g, " "));
}

function expectCleanFailure(r: CliResult, message: RegExp): void {
  expectExit(r, 1);
  expect(r.stderr).toMatch(message);
  expect(stackTraceLines(r.stderr)).toEqual([]);
  expect(r.stderr).not.toMatch(/internal error|this is a bug/i);
}

// A generous timeout: every step is a fresh CLI process (about a second each on a busy machine).
describe("converge import ADDRESS ID", { timeout: 90_000 }, () => {
  it(
    "writes a seeded binding and a seeded member to the state; the next plan " +
      "shows no changes, or exactly the stack's difference",
    async () => {
      const stack = await writeStack("stack.yaml", {
        viewers: viewers(["user:carol@example.com", "group:sre@example.com"]),
        dana,
      });
      const state = join(ws.dir, "team.json");
      await resetStats(ws.emu);

      const a = await cli(["import", "viewers", `${RP} roles/gkebackup.viewer`, "-f", stack, "--state", state]);
      expectExit(a, 0);
      expect(a.stdout).toContain(`viewers: Import complete [id=${RP} roles/gkebackup.viewer]`);
      // Short forms are completed from the provider, as in the stack.
      const b = await cli([
        "import",
        "dana",
        "churn roles/aiplatform.user user:dana@example.com",
        "-f",
        stack,
        "--state",
        state,
      ]);
      expectExit(b, 0);
      expect(b.stdout).toContain(`dana: Import complete [id=${EP} roles/aiplatform.user user:dana@example.com]`);

      const s = JSON.parse(await readFile(state, "utf8")) as State;
      expect(s.stack).toBe("team");
      expect(s.resources.map((r) => r.address)).toEqual(["viewers", "dana"]);
      const rpEtag = (await livePolicy(ws.emu, RP)).etag;
      const epEtag = (await livePolicy(ws.emu, EP)).etag;
      expect(s.resources[0]).toEqual({
        address: "viewers",
        type: BINDING,
        id: `${RP} roles/gkebackup.viewer`,
        inputs: {
          name: RP,
          role: "roles/gkebackup.viewer",
          members: ["group:sre@example.com", "user:carol@example.com"],
        },
        outputs: {
          name: RP,
          role: "roles/gkebackup.viewer",
          members: ["group:sre@example.com", "user:carol@example.com"],
          etag: rpEtag,
          id: `${RP} roles/gkebackup.viewer`,
          project: PROJECT,
        },
        dependencies: [],
      });
      expect(s.resources[1]).toEqual({
        address: "dana",
        type: MEMBER,
        id: `${EP} roles/aiplatform.user user:dana@example.com`,
        inputs: { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" },
        outputs: {
          name: EP,
          role: "roles/aiplatform.user",
          member: "user:dana@example.com",
          etag: epEtag,
          id: `${EP} roles/aiplatform.user user:dana@example.com`,
          project: PROJECT,
        },
        dependencies: [],
      });

      // Plans only read the state: the matching and the differing stack are planned side by side.
      const more = await writeStack("stack-more.yaml", {
        viewers: viewers(["user:carol@example.com", "group:sre@example.com", "user:zed@example.com"]),
        dana,
      });
      const [same, diff] = await Promise.all([
        cli(["plan", "--detailed-exitcode", "-f", stack, "--state", state]),
        cli(["plan", "--detailed-exitcode", "-f", more, "--state", state]),
      ]);
      expectExit(same, 0);
      expect(same.stdout).toContain("No changes.");
      expectExit(diff, 2);
      expect(diff.stdout).toContain("Plan: 0 to import, 0 to add, 1 to change, 0 to destroy.");
      expect(diff.stdout).toContain("# viewers will be updated in-place");
      expect(diff.stdout).not.toContain("# dana");
      expect(marked(block(diff.stdout, "viewers"))).toEqual([
        `~ resource "${BINDING}" "viewers" {`,
        `~ etag = "${rpEtag}" -> (known after apply)`,
        "~ members = [",
        '+ "user:zed@example.com",',
      ]);

      // import and plan only read.
      const st = await stats(ws.emu);
      expect(st.requests[SET_RP]).toBe(0);
      expect(st.requests[SET_EP]).toBe(0);
    },
  );

  it(
    "imports a conditional binding by its title; a members change plans as exactly " +
      "that difference (the unchanged condition is not marked)",
    async () => {
      const stack = await writeStack("stack-temp.yaml", { temp: temp(["user:alice@example.com"]) });
      const state = join(ws.dir, "team-temp.json");
      const r = await cli(["import", "temp", `${RP} roles/gkebackup.viewer until-2027`, "-f", stack, "--state", state]);
      expectExit(r, 0);
      const s = JSON.parse(await readFile(state, "utf8")) as State;
      expect(s.resources[0]!.id).toBe(`${RP} roles/gkebackup.viewer until-2027`);
      expect(s.resources[0]!.inputs).toEqual({
        name: RP,
        role: "roles/gkebackup.viewer",
        members: ["user:alice@example.com"],
        condition: UNTIL_2027,
      });
      expect(s.resources[0]!.outputs.condition).toEqual(UNTIL_2027);

      const more = await writeStack("stack-temp-more.yaml", {
        temp: temp(["user:alice@example.com", "user:zed@example.com"]),
      });
      const diff = await cli(["plan", "--detailed-exitcode", "-f", more, "--state", state]);
      expectExit(diff, 2);
      expect(diff.stdout).toContain("Plan: 0 to import, 0 to add, 1 to change, 0 to destroy.");
      // BUG (src/cli/render/plan-text.ts, attribute(): JSON.stringify equality is key-order
      // sensitive): the state holds the condition as {description, expression, title}, the stack as
      // {expression, title, description}, so the unchanged condition prints as "~ condition = {" / "}".
      expect(marked(block(diff.stdout, "temp"))).toEqual([
        `~ resource "${BINDING}" "temp" {`,
        expect.stringMatching(/^~ etag = "[^"]+" -> \(known after apply\)$/),
        "~ members = [",
        '+ "user:zed@example.com",',
      ]);
    },
  );

  it("failures exit 1 with a plain message and change nothing (state bytes, files, zero setIamPolicy)", async () => {
    const stack = await writeStack("stack-fail.yaml", {
      viewers: viewers(["user:carol@example.com", "group:sre@example.com"]),
      dana,
    });
    // A state that already holds `viewers`.
    const base = join(ws.dir, "fail-base.json");
    expectExit(await cli(["import", "viewers", `${RP} roles/gkebackup.viewer`, "-f", stack, "--state", base]), 0);
    const baseBytes = await readFile(base);

    const cases: { name: string; args: string[]; existing: boolean; message: RegExp }[] = [
      {
        name: "nobinding",
        args: ["viewers", `${RP} roles/gkebackup.restoreAdmin`],
        existing: false,
        message: new RegExp(
          String.raw`no binding for roles\/gkebackup\.restoreAdmin \(unconditional\) on projects\/my-projec` +
            String.raw`t\/locations\/us-central1\/restorePlans\/nightly`,
        ),
      },
      {
        name: "nomember",
        args: ["dana", "churn roles/aiplatform.user user:nobody@example.com"],
        existing: true,
        message: /user:nobody@example\.com is not a member of roles\/aiplatform\.user/,
      },
      {
        name: "noplan",
        args: ["viewers", "projects/my-project/locations/us-central1/restorePlans/nosuch roles/gkebackup.viewer"],
        existing: false,
        message: /restorePlans\/nosuch does not exist/,
      },
      {
        name: "malformed-binding",
        args: ["viewers", "nightly"],
        existing: false,
        message: /malformed; expected "\{name\} \{role\} \[condition title\]"/,
      },
      {
        name: "malformed-member",
        args: ["dana", "churn roles/aiplatform.user"],
        existing: true,
        message: /malformed; expected "\{name\} \{role\} \{member\} \[condition title\]"/,
      },
      {
        name: "already",
        args: ["viewers", `${RP} roles/gkebackup.viewer`],
        existing: true,
        message: /viewers is already in the state/,
      },
      {
        name: "undeclared",
        args: ["ghost", `${RP} roles/gkebackup.viewer`],
        existing: true,
        message: /no resource "ghost" in .*stack-fail\.yaml/,
      },
    ];
    const paths = await Promise.all(
      cases.map(async (c) => {
        const d = join(ws.dir, `fail-${c.name}`);
        await mkdir(d);
        const state = join(d, "team.json");
        if (c.existing) await copyFile(base, state);
        return { d, state };
      }),
    );
    await resetStats(ws.emu);
    const results = await Promise.all(
      cases.map((c, i) => cli(["import", ...c.args, "-f", stack, "--state", paths[i]!.state])),
    );
    for (const [i, c] of cases.entries()) {
      const r = results[i]!;
      try {
        expectCleanFailure(r, c.message);
      } catch (e) {
        throw new Error(`case ${c.name}: ${(e as Error).message}\nstderr: ${r.stderr}`);
      }
      const { d, state } = paths[i]!;
      if (c.existing) {
        expect((await readFile(state)).equals(baseBytes), `${c.name}: state bytes changed`).toBe(true);
        expect(await readdir(d), `${c.name}: stray files`).toEqual(["team.json"]);
      } else {
        expect(existsSync(state), `${c.name}: a state was written`).toBe(false);
        expect(await readdir(d), `${c.name}: stray files`).toEqual([]);
      }
    }
    const st = await stats(ws.emu);
    expect(st.requests[SET_RP]).toBe(0);
    expect(st.requests[SET_EP]).toBe(0);
  });
});
