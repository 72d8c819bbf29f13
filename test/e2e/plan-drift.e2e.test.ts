// `converge plan` against a running emulator with a state in sync with the live cloud: no
// changes (exit 0 with --detailed-exitcode), then members removed out of band (a raw
// read-modify-write setIamPolicy) show up as drift and changes (exit 2). Plan never writes.
import { readFile, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { EP, RP, bindingState, makeState, memberState } from "../fixtures/builders.js";
import { GET_EP, GET_RP, SET_EP, SET_RP } from "../support/emulator.js";
import { DANA_INVOKER, NIGHTLY_VIEWERS, stackHead } from "./apply-helpers.js";
import {
  expectExit,
  livePolicy,
  resetStats,
  runCli,
  setPolicyOutOfBand,
  stackTraceLines,
  stats,
  useStackWorkspace,
} from "./helpers.js";

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
  endpoints: [
    {
      name: EP,
      policy: {
        bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com", "user:erin@example.com"] }],
      },
    },
  ],
};

// The stack spells Alice with a capital; Google (and the emulator) hold it lower-cased.
const STACK = `${stackHead("drift")}${NIGHTLY_VIEWERS}${DANA_INVOKER}outputs:
  viewersId: \${viewers.id}
`;

const ws = useStackWorkspace(SEED, "converge-drift-", STACK, "drift.json");
let stateText: string;

beforeAll(async () => {
  // The state a successful apply would have written: normalized inputs, live etags.
  const rpEtag = (await livePolicy(ws.emu, RP)).etag!;
  const epEtag = (await livePolicy(ws.emu, EP)).etag!;
  const state: State = makeState(
    "drift",
    [
      bindingState(
        "viewers",
        { name: RP, role: "roles/gkebackup.viewer", members: ["user:bob@example.com", "user:Alice@example.com"] },
        rpEtag,
      ),
      memberState("invoker", { name: EP, role: "roles/aiplatform.user", member: "user:dana@example.com" }, epEtag, [
        "viewers",
      ]),
    ],
    { viewersId: `${RP} roles/gkebackup.viewer` },
  );
  stateText = JSON.stringify(state, null, 2) + "\n";
  await writeFile(ws.statePath, stateText, { mode: 0o600 });
});

const plan = (...extra: string[]) =>
  runCli(["plan", "-f", ws.stackFile, "--state", ws.statePath, "--detailed-exitcode", ...extra], {
    emulator: ws.emu,
    cwd: ws.dir,
  });

describe("plan against a live cloud in sync with the state", () => {
  it("the hand-written state is a valid converge state", async () => {
    expect(validate("state.schema.json", JSON.parse(stateText))).toEqual([]);
  });

  it("says No changes and exits 0, reading each policy once and writing nothing", async () => {
    await resetStats(ws.emu);
    const r = await plan();
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
    expect(r.stdout).not.toContain("Objects have changed outside of converge");
    expect(r.stderr).toBe("");
    const s = await stats(ws.emu);
    expect(s.requests[GET_RP]).toBe(1);
    expect(s.requests[GET_EP]).toBe(1);
    expect(s.requests[SET_RP]).toBe(0);
    expect(s.requests[SET_EP]).toBe(0);
    expect(await readFile(ws.statePath, "utf8")).toBe(stateText);
  });

  it("says No changes with --refresh=false too, without reading anything", async () => {
    await resetStats(ws.emu);
    const r = await plan("--refresh=false");
    expectExit(r, 0);
    expect(r.stdout).toContain("No changes.");
    const s = await stats(ws.emu);
    expect(Object.values(s.requests).reduce((a, b) => a + b, 0)).toBe(0);
  });
});

describe("after a member is removed out of band", () => {
  beforeAll(async () => {
    await setPolicyOutOfBand(ws.emu, RP, (p) => ({
      ...p,
      bindings: p.bindings!.map((b) =>
        b.role === "roles/gkebackup.viewer"
          ? { ...b, members: b.members.filter((m) => m !== "user:bob@example.com") }
          : b,
      ),
    }));
    expect((await livePolicy(ws.emu, RP)).bindings!.find((b) => b.role === "roles/gkebackup.viewer")!.members).toEqual([
      "user:alice@example.com",
    ]);
  });

  it("reports the drift, plans an in-place update that restores the member, and exits 2", async () => {
    await resetStats(ws.emu);
    const r = await plan();
    expectExit(r, 2);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    const out = r.stdout;
    expect(out).toContain("Objects have changed outside of converge");
    const drift = out.slice(
      out.indexOf("Objects have changed"),
      out.indexOf("Unless you have made equivalent changes"),
    );
    expect(drift).toContain("  # viewers has changed");
    expect(drift).toContain('  ~ resource "cloudnative:backup/v1:RestorePlanIamBinding" "viewers" {');
    expect(drift).toContain('          - "user:bob@example.com",');
    expect(drift).not.toContain("invoker");
    expect(out).toContain("  # viewers will be updated in-place");
    expect(out).toMatch(/^ {2}~ resource "cloudnative:backup\/v1:RestorePlanIamBinding" "viewers" \{$/m);
    const change = out.slice(out.indexOf("  # viewers will be updated in-place"));
    expect(change).toContain('          + "user:bob@example.com",');
    expect(out).toContain("Plan: 0 to import, 0 to add, 1 to change, 0 to destroy.");
    const s = await stats(ws.emu);
    expect(s.requests[SET_RP]).toBe(0);
    expect(s.requests[SET_EP]).toBe(0);
    expect(await readFile(ws.statePath, "utf8")).toBe(stateText);
  });

  it("plans to re-create a member resource whose member was removed out of band", async () => {
    await setPolicyOutOfBand(ws.emu, EP, (p) => ({
      ...p,
      bindings: p.bindings!.map((b) => ({ ...b, members: b.members.filter((m) => m !== "user:dana@example.com") })),
    }));
    const r = await plan();
    expectExit(r, 2);
    expect(r.stdout).toContain("  # invoker has been deleted");
    expect(r.stdout).toContain("  # invoker will be created");
    expect(r.stdout).toContain("  # (it was deleted outside of converge)");
    expect(r.stdout).toContain("Plan: 0 to import, 1 to add, 1 to change, 0 to destroy.");
  });
});
