// Google names one project by its number and by its ID: `projects/123456789012/…` and
// `projects/my-project/…` are one restore plan, one policy. A plan completes every name with the
// project's ID (Resource Manager's projects.get, asked once per number), so two resources on one
// policy are planned as one and their overlap is found; a state written with numbers plans no
// change against a stack that writes the ID. Built CLI against a seeded emulator, whose project
// my-project has the number 123456789012.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { expectExit, livePolicy, resetStats, stackTraceLines, stats, useEmulatorWorkspace } from "./helpers.js";
import { RESTORE_PLAN, familySeed, stackRunner } from "./iam-family-helpers.js";

const ws = useEmulatorWorkspace(familySeed(["nightly", "weekly"]), "converge-project-numbers-");
const NUMBER = "123456789012";
const member = (name: string, who: string) => ({
  type: RESTORE_PLAN.memberT,
  properties: { name, role: RESTORE_PLAN.r1, member: who },
});

describe("project numbers and IDs", { timeout: 90_000 }, () => {
  it(
    "a binding by project ID and a member of it by project number: the " +
      "plan finds the overlap and nothing is written",
    async () => {
      const mixed = stackRunner(ws, "mixed");
      await mixed.write({
        viewers: {
          type: RESTORE_PLAN.bindingT,
          properties: { name: "nightly", role: RESTORE_PLAN.r1, members: ["user:alice@example.com"] },
        },
        bob: member(`projects/${NUMBER}/locations/us-central1/restorePlans/nightly`, "user:bob@example.com"),
      });
      const before = await livePolicy(ws.emu, RESTORE_PLAN.full("nightly"));
      await resetStats(ws.emu);
      for (const args of [["plan"], ["apply", "--auto-approve"]]) {
        const r = await mixed.cli(...args);
        expectExit(r, 1);
        expect(r.stderr).toMatch(
          new RegExp(
            String.raw`resources "viewers" and "bob" both manage user:bob@example\.com of role roles\/gkebackup` +
              String.raw`\.viewer on projects\/my-project\/locations\/us-central1\/restorePlans\/nightly`,
          ),
        );
        expect(stackTraceLines(r.stderr)).toEqual([]);
      }
      const s = await stats(ws.emu);
      expect(s.requests["cloudresourcemanager.projects.get"]).toBe(2);
      expect(s.requests["gkebackup.projects.locations.restorePlans.getIamPolicy"]).toBe(2);
      expect(s.requests["gkebackup.projects.locations.restorePlans.setIamPolicy"] ?? 0).toBe(0);
      expect(await livePolicy(ws.emu, RESTORE_PLAN.full("nightly"))).toEqual(before);
    },
  );

  it(
    "a stack that writes the number is recorded with the ID, and the same " +
      "stack written with the ID then plans no change",
    async () => {
      const weekly = stackRunner(ws, "weekly");
      await weekly.write({
        carol: member(`projects/${NUMBER}/locations/us-central1/restorePlans/weekly`, "user:carol@example.com"),
      });
      await resetStats(ws.emu);
      const applied = await weekly.cli("apply", "--auto-approve");
      expectExit(applied, 0);
      expect(applied.stdout).toContain("projects/my-project/locations/us-central1/restorePlans/weekly");
      const state = JSON.parse(await readFile(weekly.state(), "utf8")) as { resources: { inputs: { name: string } }[] };
      expect(state.resources.map((r) => r.inputs.name)).toEqual([RESTORE_PLAN.full("weekly")]);
      expect(
        (await livePolicy(ws.emu, RESTORE_PLAN.full("weekly"))).bindings?.find((b) => b.role === RESTORE_PLAN.r1)
          ?.members,
      ).toContain("user:carol@example.com");
      // The same stack by ID, on the same state: no change, and no call to Resource Manager.
      await weekly.write({ carol: member("weekly", "user:carol@example.com") });
      await resetStats(ws.emu);
      const again = await weekly.cli("plan");
      expectExit(again, 0);
      expect(again.stdout).toMatch(/No changes/);
      expect((await stats(ws.emu)).requests["cloudresourcemanager.projects.get"] ?? 0).toBe(0);
    },
  );

  it(
    "a number Resource Manager does not know: exit 1 saying what " + "to write instead, and no policy is read",
    async () => {
      const unknown = stackRunner(ws, "unknown");
      await unknown.write({
        dan: member("projects/999999999999/locations/us-central1/restorePlans/nightly", "user:dan@example.com"),
      });
      await resetStats(ws.emu);
      const r = await unknown.cli("plan");
      expectExit(r, 1);
      expect(r.stderr).toContain("cannot find the project ID of project number 999999999999 (used by dan)");
      expect(r.stderr).toContain("PERMISSION_DENIED");
      expect(r.stderr).toContain("Write the project ID instead of 999999999999");
      expect(stackTraceLines(r.stderr)).toEqual([]);
      const s = await stats(ws.emu);
      expect(s.requests["gkebackup.projects.locations.restorePlans.getIamPolicy"] ?? 0).toBe(0);
    },
  );
});
