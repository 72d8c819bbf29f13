// Google sometimes commits a setIamPolicy and then answers 500, 503 or 504, or the connection
// resets. A grant converge wrote so is converge's own: the state does not record it as adopted,
// the plan after apply has no changes, and destroy revokes it, for a member created, a member
// replaced on one object (its member changes) and a member moved to another object. Real CLI,
// real emulator losing every answer to a successful write.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { expectExit, runCli, useEmulatorWorkspace, world } from "./helpers.js";
import { clearFaults, membersOf, policyIn, readStateFile, rp, setFaults, stackHead } from "./apply-helpers.js";

const ADMIN = "roles/gkebackup.admin";
const CAROL = "user:carol@example.com";

const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    { name: rp("nightly"), policy: { bindings: [{ role: ADMIN, members: [CAROL] }] } },
    { name: rp("weekly"), policy: { bindings: [{ role: ADMIN, members: [CAROL] }] } },
  ],
};

const member = (object: string, who: string) =>
  `  grant:\n    type: cloudnative:backup/v1:RestorePlanIamMember\n    properties:\n      ` +
  `name: ${object}\n      role: ${ADMIN}\n      member: ${who}\n`;

const ws = useEmulatorWorkspace(SEED, "converge-lost-answers-");

const KINDS = ["500", "503", "504", "reset"] as const;

type Case = "created" | "replaced" | "moved";
/** The steps of each case, as (object, member); only the last one loses its answers. */
const STEPS: Record<Case, (who: string, other: string) => [string, string][]> = {
  created: (who) => [["nightly", who]],
  replaced: (who, other) => [
    ["nightly", who],
    ["nightly", other],
  ],
  moved: (who) => [
    ["nightly", who],
    ["weekly", who],
  ],
};

describe("writes whose answers are lost after they committed", () => {
  for (const kind of KINDS) {
    for (const c of Object.keys(STEPS) as Case[]) {
      it(`${kind}: a member ${c} stays converge's own; destroy revokes it`, async () => {
        const name = `lost${kind}${c}`;
        const stackFile = join(ws.dir, `${name}.yaml`);
        const statePath = join(ws.dir, `${name}.json`);
        const who = `user:zoe-${name}@example.com`;
        const other = `user:yann-${name}@example.com`;
        const cli = (...args: string[]) =>
          runCli([...args, "-f", stackFile, "--state", statePath], { cwd: ws.dir, emulator: ws.emu });
        const live = async (object: string) =>
          membersOf(policyIn(await world(ws.emu), rp(object)), ADMIN).filter((m) => m.includes(name));
        const steps = STEPS[c](who, other);
        for (const [i, [object, m]] of steps.entries()) {
          await writeFile(stackFile, stackHead(name) + member(object, m));
          const last = i === steps.length - 1;
          if (last) await setFaults(ws.emu, { lostResponses: { rate: 1, kinds: [kind] } });
          const applied = await cli("apply", "--auto-approve").finally(() => (last ? clearFaults(ws.emu) : undefined));
          expectExit(applied, 0);
        }
        const [object, m] = steps.at(-1)!;
        expect(await live(object)).toEqual([m]);
        const state = await readStateFile(statePath);
        expect(state.resources.map((r) => [r.address, r.adopted])).toEqual([["grant", undefined]]);
        expectExit(await cli("plan", "--detailed-exitcode"), 0);

        expectExit(await cli("destroy", "--auto-approve"), 0);
        expect(await live("nightly")).toEqual([]);
        expect(await live("weekly")).toEqual([]);
        // Nobody else's access was lost.
        for (const o of ["nightly", "weekly"])
          expect(membersOf(policyIn(await world(ws.emu), rp(o)), ADMIN)).toContain(CAROL);
      });
    }
  }
});
