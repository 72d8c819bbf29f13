// `converge plan` against a running emulator with a state in sync with the live cloud: no
// changes (exit 0 with --detailed-exitcode), then members removed out of band (a raw
// read-modify-write setIamPolicy) show up as drift and changes (exit 2). Plan never writes.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { BINDING, EP, MEMBER, RP, bindingState, makeState, memberState } from "../fixtures/builders.js";
import { expectExit, livePolicy, resetStats, runCli, setPolicyOutOfBand, stackTraceLines, startSeededEmulator, stats, tempDir } from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: RP,
      policy: {
        bindings: [
          { role: "roles/gkebackup.viewer", members: ["user:alice@example.com", "user:bob@example.com"] },
          { role: "roles/gkebackup.backupAdmin", members: ["group:platform@example.com"] },
        ],
      },
    },
  ],
  endpoints: [{ name: EP, policy: { bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com", "user:erin@example.com"] }] } }],
};

// The stack spells Alice with a capital; Google (and the emulator) hold it lower-cased.
const STACK = `name: drift
provider:
  project: my-project
  location: us-central1
resources:
  viewers:
    type: ${BINDING}
    properties:
      name: nightly
      role: roles/gkebackup.viewer
      members: [user:bob@example.com, user:Alice@example.com]
  invoker:
    type: ${MEMBER}
    properties:
      name: churn
      role: roles/aiplatform.user
      member: user:dana@example.com
    options:
      dependsOn: [viewers]
outputs:
  viewersId: \${viewers.id}
`;

const GET_RP = "gkebackup.projects.locations.restorePlans.getIamPolicy";
const GET_EP = "aiplatform.projects.locations.endpoints.getIamPolicy";
const SET_RP = "gkebackup.projects.locations.restorePlans.setIamPolicy";
const SET_EP = "aiplatform.projects.locations.endpoints.setIamPolicy";

let emu: RunningEmulator;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let stackFile: string;
let statePath: string;
let stateText: string;

beforeAll(async () => {
  emu = await startSeededEmulator(SEED);
  tmp = await tempDir("converge-drift-");
  stackFile = join(tmp.dir, "stack.yaml");
  statePath = join(tmp.dir, "state", "drift.json");
  await writeFile(stackFile, STACK);
  // The state a successful apply would have written: normalized inputs, live etags.
  const rpEtag = (await livePolicy(emu, RP)).etag!;
  const epEtag = (await livePolicy(emu, EP)).etag!;
  const state: State = makeState(
    "drift",
    [
      bindingState("viewers", { name: RP, role: "roles/gkebackup.viewer", members: ["user:bob@example.com", "user:Alice@example.com"] }, rpEtag),
      memberState("invoker", { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" }, epEtag, ["viewers"]),
    ],
    { viewersId: `${RP} roles/gkebackup.viewer` },
  );
  await mkdir(join(tmp.dir, "state"));
  stateText = JSON.stringify(state, null, 2) + "\n";
  await writeFile(statePath, stateText, { mode: 0o600 });
});

afterAll(async () => {
  await emu?.close();
  await tmp?.remove();
});

const plan = (...extra: string[]) => runCli(["plan", "-f", stackFile, "--state", statePath, "--detailed-exitcode", ...extra], { emulator: emu, cwd: tmp.dir });

describe("plan against a live cloud in sync with the state", () => {
  it("the hand-written state is a valid converge state", async () => {
    expect(validate("state.schema.json", JSON.parse(stateText))).toEqual([]);
  });

  it("says No changes and exits 0, reading each policy once and writing nothing", async () => {
    await resetStats(emu);
    const r = await plan();
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
    expect(r.stdout).not.toContain("Objects have changed outside of converge");
    expect(r.stderr).toBe("");
    const s = await stats(emu);
    expect(s.requests[GET_RP]).toBe(1);
    expect(s.requests[GET_EP]).toBe(1);
    expect(s.requests[SET_RP]).toBe(0);
    expect(s.requests[SET_EP]).toBe(0);
    expect(await readFile(statePath, "utf8")).toBe(stateText);
  });

  it("says No changes with --refresh=false too, without reading anything", async () => {
    await resetStats(emu);
    const r = await plan("--refresh=false");
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
    const s = await stats(emu);
    expect(Object.values(s.requests).reduce((a, b) => a + b, 0)).toBe(0);
  });
});

describe("after a member is removed out of band", () => {
  beforeAll(async () => {
    await setPolicyOutOfBand(emu, RP, (p) => ({
      ...p,
      bindings: p.bindings!.map((b) => (b.role === "roles/gkebackup.viewer" ? { ...b, members: b.members.filter((m) => m !== "user:bob@example.com") } : b)),
    }));
    expect((await livePolicy(emu, RP)).bindings!.find((b) => b.role === "roles/gkebackup.viewer")!.members).toEqual(["user:alice@example.com"]);
  });

  it("reports the drift, plans an in-place update that restores the member, and exits 2", async () => {
    await resetStats(emu);
    const r = await plan();
    expectExit(r, 2);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const out = r.stdout;
    expect(out).toContain("Objects have changed outside of converge");
    const drift = out.slice(out.indexOf("Objects have changed"), out.indexOf("Unless you have made equivalent changes"));
    expect(drift).toContain("  # viewers has changed");
    expect(drift).toContain('  ~ resource "cloudnative:backup/v1:RestorePlanIamBinding" "viewers" {');
    expect(drift).toContain('          - "user:bob@example.com",');
    expect(drift).not.toContain("invoker");
    expect(out).toContain("  # viewers will be updated in-place");
    expect(out).toMatch(/^ {2}~ resource "cloudnative:backup\/v1:RestorePlanIamBinding" "viewers" \{$/m);
    const change = out.slice(out.indexOf("  # viewers will be updated in-place"));
    expect(change).toContain('          + "user:bob@example.com",');
    expect(out).toContain("Plan: 0 to import, 0 to add, 1 to change, 0 to destroy.");
    const s = await stats(emu);
    expect(s.requests[SET_RP]).toBe(0);
    expect(s.requests[SET_EP]).toBe(0);
    expect(await readFile(statePath, "utf8")).toBe(stateText);
  });

  it("plans to re-create a member resource whose member was removed out of band", async () => {
    await setPolicyOutOfBand(emu, EP, (p) => ({ ...p, bindings: p.bindings!.map((b) => ({ ...b, members: b.members.filter((m) => m !== "user:dana@example.com") })) }));
    const r = await plan();
    expectExit(r, 2);
    expect(r.stdout).toContain("  # invoker has been deleted");
    expect(r.stdout).toContain("  # invoker will be created");
    expect(r.stdout).toContain("  # (it was deleted outside of converge)");
    expect(r.stdout).toContain("Plan: 0 to import, 1 to add, 1 to change, 0 to destroy.");
  });
});
