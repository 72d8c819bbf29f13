// A deleted federated identity (deleted:principal://…/subject/{value}, listed in Google's
// Binding.members reference) through the built CLI against a seeded emulator whose policy holds it
// in two spellings that differ only in case. Federated identifiers compare case-sensitively
// (SPEC), deleted or not: the two spellings are two members. A binding that drops them shows both
// revocations in the plan; a policy resource may list one and keep it; import --generate --as
// member writes a resource for each. Needs `npm run build`.
import { describe, expect, it } from "vitest";
import { expectExit, runCli, useEmulatorWorkspace } from "./helpers.js";
import {
  ALICE,
  CAROL,
  DAN,
  FOREIGN_AUDIT,
  RESTORE_PLAN as K,
  expected,
  generateAndAdopt,
  liveView,
  stackRunner,
} from "./iam-family-helpers.js";

const POOL = "principal://iam.googleapis.com/locations/global/workforcePools/staff";
const GONE_UPPER = `deleted:${POOL}/subject/Alice`;
const GONE_LOWER = `deleted:${POOL}/subject/alice`;

/** carol and both spellings on r1, dan on r2, foreign audit logging. */
const bothSpellings = (id: string) => ({
  name: K.full(id),
  policy: {
    version: 1 as const,
    bindings: [
      { role: K.r1, members: [CAROL, GONE_UPPER, GONE_LOWER] },
      { role: K.r2, members: [DAN] },
    ],
    auditConfigs: FOREIGN_AUDIT,
  },
});

const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [bothSpellings("bind"), bothSpellings("pol"), bothSpellings("gen")],
  },
  "converge-deleted-principal-",
);

describe("deleted:principal:// members", { timeout: 120_000 }, () => {
  it("a binding that drops both spellings lists both revocations, and apply removes exactly those", async () => {
    const name = K.full("bind");
    const s = stackRunner(ws, "bind");
    await s.write({ b: { type: K.bindingT, properties: { name: "bind", role: K.r1, members: [ALICE] } } });
    const plan = await s.planChanges();
    expect(plan.stdout).toContain("Access: 1 granted, 3 revoked");
    expect(plan.stdout).toContain(`- ${GONE_UPPER} loses ${K.r1} on ${name} (b)`);
    expect(plan.stdout).toContain(`- ${GONE_LOWER} loses ${K.r1} on ${name} (b)`);
    expect(plan.stdout).toContain(`- ${CAROL} loses ${K.r1} on ${name} (b)`);
    await s.apply();
    expect(await liveView(ws.emu, name)).toEqual({
      bindings: expected([
        { role: K.r1, members: [ALICE] },
        { role: K.r2, members: [DAN] },
      ]),
      auditConfigs: FOREIGN_AUDIT,
    });
    await s.expectNoChanges();
  });

  it("a policy resource listing one spelling validates, keeps it and revokes only the other", async () => {
    const name = K.full("pol");
    const s = stackRunner(ws, "pol");
    await s.write({
      p: {
        type: K.policyT,
        properties: {
          name: "pol",
          bindings: [
            { role: K.r1, members: [CAROL, GONE_UPPER] },
            { role: K.r2, members: [DAN] },
          ],
        },
      },
    });
    const valid = await runCli(["validate", "-f", s.file()], { cwd: ws.dir });
    expectExit(valid, 0);
    expect(valid.stdout).toContain("Success! The stack is valid");
    const plan = await s.planChanges();
    expect(plan.stdout).toContain("Access: 0 granted, 1 revoked");
    expect(plan.stdout).toContain(`- ${GONE_LOWER} loses ${K.r1} on ${name} (p)`);
    expect(plan.stdout).not.toContain(`${GONE_UPPER} loses`);
    await s.apply();
    expect((await liveView(ws.emu, name)).bindings).toEqual(
      expected([
        { role: K.r1, members: [CAROL, GONE_UPPER] },
        { role: K.r2, members: [DAN] },
      ]),
    );
    await s.expectNoChanges();
  });

  it("import --generate --as member writes one member resource per spelling", async () => {
    const resources = await generateAndAdopt(ws, "gen", ["--as", "member", K.full("gen")], 4);
    expect(resources.map((r) => r.properties.member).sort()).toEqual([CAROL, DAN, GONE_LOWER, GONE_UPPER].sort());
  });
});
