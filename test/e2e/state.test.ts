// `converge state list|show|rm|mv` (SPEC section 7) through the built CLI: they print and edit
// the state only, never the cloud; rm makes the next plan a create, mv after a rename in the
// stack makes the next plan clean. Needs `npm run build`.
import { readFile, writeFile } from "node:fs/promises";
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
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";

const SEED: EmulatorWorld = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [
    {
      name: RP,
      policy: {
        bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] }],
      },
    },
  ],
  endpoints: [
    {
      name: EP,
      policy: {
        bindings: [{ role: "roles/aiplatform.user", members: ["user:dana@example.com", "group:ml@example.com"] }],
      },
    },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-state-");

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const cli = (args: string[]) => runCli(args, { emulator: ws.emu, cwd: ws.dir });

/** A stack named "team" (state: state/team.json beside the stack file). */
async function writeStack(file: string, memberAddress: string): Promise<string> {
  const path = join(ws.dir, file);
  const resources = {
    viewers: {
      type: BINDING,
      properties: {
        name: "nightly",
        role: "roles/gkebackup.viewer",
        members: ["user:carol@example.com", "group:sre@example.com"],
      },
    },
    [memberAddress]: {
      type: MEMBER,
      properties: { name: "churn", role: "roles/aiplatform.user", member: "user:dana@example.com" },
    },
  };
  await writeFile(path, stringify({ name: "team", provider: { project: PROJECT, location: LOC }, resources }));
  return path;
}

// A generous timeout: every step is a fresh CLI process (about a second each on a busy machine).
describe("converge state", { timeout: 90_000 }, () => {
  it(
    "list / show / --json print the state; mv after a rename plans clean; rm forgets " +
      "without touching the cloud and the next plan creates",
    async () => {
      const stack = await writeStack("stack.yaml", "dana");
      const statePath = join(ws.dir, "state", "team.json");
      expectExit(await cli(["import", "viewers", "nightly roles/gkebackup.viewer", "-f", "stack.yaml"]), 0);
      expectExit(
        await cli(["import", "dana", "churn roles/aiplatform.user user:dana@example.com", "-f", "stack.yaml"]),
        0,
      );
      const imported = JSON.parse(await readFile(statePath, "utf8")) as State;
      const viewers = imported.resources.find((r) => r.address === "viewers")!;
      const dana = imported.resources.find((r) => r.address === "dana")!;

      // Read-only commands: the default path from -f, or --state.
      await resetStats(ws.emu);
      const [list, listJson, show, showJson] = await Promise.all([
        cli(["state", "list", "-f", stack]),
        cli(["state", "list", "--json", "--state", statePath]),
        cli(["state", "show", "viewers", "-f", "stack.yaml"]),
        cli(["state", "show", "dana", "--json", "--state", statePath]),
      ]);
      for (const r of [list, listJson, show, showJson]) expectExit(r, 0);
      expect(list.stdout).toBe("viewers\ndana\n");
      expect(JSON.parse(listJson.stdout)).toEqual([
        { address: "viewers", type: BINDING, id: `${RP} roles/gkebackup.viewer` },
        { address: "dana", type: MEMBER, id: `${EP} roles/aiplatform.user user:dana@example.com` },
      ]);
      expect(show.stdout).toContain("# viewers:");
      expect(show.stdout).toContain(`resource "${BINDING}" "viewers" {`);
      expect(show.stdout).toMatch(
        new RegExp(`^ +id += ${escapeRe(JSON.stringify(`${RP} roles/gkebackup.viewer`))}$`, "m"),
      );
      expect(show.stdout).toMatch(new RegExp(`^ +etag += ${escapeRe(JSON.stringify(viewers.outputs.etag))}$`, "m"));
      // Nested values laid out as the plan lays them out (issue 13): one member a line.
      expect(show.stdout).toMatch(/^ +members += \[\n +"group:sre@example\.com",\n +"user:carol@example\.com",\n +\]/m);
      expect(show.stdout).toMatch(/^ +project += "my-project"$/m);
      expect(JSON.parse(showJson.stdout)).toEqual(dana);
      expect(totalRequests(await stats(ws.emu))).toBe(0);

      // mv: rename the resource in the stack, then in the state: nothing to do.
      const renamed = await writeStack("renamed.yaml", "analyst");
      const mv = await cli(["state", "mv", "dana", "analyst", "-f", renamed]);
      expectExit(mv, 0);
      expect(mv.stdout).toContain("Moved dana to analyst.");
      const moved = JSON.parse(await readFile(statePath, "utf8")) as State;
      expect(moved.resources.map((r) => r.address)).toEqual(["viewers", "analyst"]);
      expect({ ...moved.resources[1], address: "dana" }).toEqual(dana);
      const clean = await cli(["plan", "--detailed-exitcode", "-f", renamed]);
      expectExit(clean, 0);
      expect(clean.stdout).toContain("No changes.");

      // rm: forgets, the grant stays in the cloud, no cloud call at all.
      await resetStats(ws.emu);
      const rm = await cli(["state", "rm", "viewers", "-f", renamed]);
      expectExit(rm, 0);
      expect(rm.stdout).toContain("Removed 1 resource from the state: viewers.");
      expect(totalRequests(await stats(ws.emu))).toBe(0);
      const live = await livePolicy(ws.emu, RP);
      expect(live.bindings?.find((b) => b.role === "roles/gkebackup.viewer")?.members.sort()).toEqual([
        "group:sre@example.com",
        "user:carol@example.com",
      ]);
      const after = JSON.parse(await readFile(statePath, "utf8")) as State;
      expect(after.resources.map((r) => r.address)).toEqual(["analyst"]);
      expect(after.lineage).toBe(imported.lineage);

      // plan takes no lock, so it runs beside the read-only and failing state commands. Unknown
      // addresses: exit 1, plain message, nothing removed.
      const bytes = await readFile(statePath);
      const [plan, list2, rmMissing, showMissing] = await Promise.all([
        cli(["plan", "--detailed-exitcode", "-f", renamed]),
        cli(["state", "list", "--state", statePath]),
        cli(["state", "rm", "viewers", "-f", renamed]),
        cli(["state", "show", "nosuch", "--state", statePath]),
      ]);
      expect(list2.stdout).toBe("analyst\n");
      expectExit(plan, 2);
      expect(plan.stdout).toContain("# viewers will be created");
      expect(plan.stdout).not.toContain("# analyst");
      expect(plan.stdout).toContain("Plan: 0 to import, 1 to add, 0 to change, 0 to destroy.");
      const st = await stats(ws.emu);
      expect(st.requests[SET_RP]).toBe(0);
      expect(st.requests[SET_EP]).toBe(0);

      expectExit(rmMissing, 1);
      expect(rmMissing.stderr).toContain("not in the state: viewers");
      expectExit(showMissing, 1);
      expect(showMissing.stderr).toContain("nosuch is not in the state");
      for (const r of [rmMissing, showMissing]) expect(stackTraceLines(r.stderr)).toEqual([]);
      expect((await readFile(statePath)).equals(bytes)).toBe(true);
    },
  );
});
