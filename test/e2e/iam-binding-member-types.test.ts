// Issue 16: the new binding and member types (EndpointIamBinding, RestorePlanIamMember) through the
// built CLI against a seeded emulator where every object already holds foreign grants (carol on
// r1, dan on r2) and audit logging. A member leaves the other members of its role untouched, a
// binding the other roles; neither touches audit configs. Create, update in place, replace,
// destroy, import by ID (CLI and options.import), import --generate --as member|binding.
// Needs `npm run build`.
import { describe, expect, it } from "vitest";
import { expectExit, resetStats, setPolicyOutOfBand, stats, useEmulatorWorkspace } from "./helpers.js";
import { setCalls } from "./apply-helpers.js";
import {
  ALICE,
  BOB,
  CAROL,
  DAN,
  ENDPOINT,
  FOREIGN_AUDIT,
  RESTORE_PLAN,
  UNTIL_2027,
  expected,
  familySeed,
  generateAndAdopt,
  liveView,
  stackRunner,
  type StackResource,
} from "./iam-family-helpers.js";

const SEED = familySeed(["m1", "m2", "b1", "b2", "i1", "i2", "g1"]);
// One object with a conditional binding, to import by an ID with a condition title.
SEED.endpoints!.push({
  name: ENDPOINT.full("cond"),
  policy: {
    version: 3,
    bindings: [
      { role: ENDPOINT.r1, members: [ALICE], condition: UNTIL_2027 },
      { role: ENDPOINT.r1, members: [CAROL] },
    ],
  },
});
SEED.restorePlans!.push({
  name: RESTORE_PLAN.full("cond"),
  policy: {
    version: 3,
    bindings: [
      { role: RESTORE_PLAN.r1, members: [ALICE], condition: UNTIL_2027 },
      { role: RESTORE_PLAN.r1, members: [CAROL] },
    ],
  },
});

const ws = useEmulatorWorkspace(SEED, "converge-iam-binding-member-");

const K = RESTORE_PLAN;
const E = ENDPOINT;
const member = (
  name: string,
  role: string,
  who: string,
  extra: Record<string, unknown> = {},
  options?: Record<string, unknown>,
): StackResource => ({
  type: K.memberT,
  properties: { name, role, member: who, ...extra },
  ...(options ? { options } : {}),
});
const binding = (
  name: string,
  role: string,
  members: string[],
  extra: Record<string, unknown> = {},
  options?: Record<string, unknown>,
): StackResource => ({
  type: E.bindingT,
  properties: { name, role, members, ...extra },
  ...(options ? { options } : {}),
});

describe("RestorePlanIamMember", { timeout: 120_000 }, () => {
  const M1 = K.full("m1");
  const M2 = K.full("m2");

  it(
    "create, re-add after an out-of-band removal, replace (role, then object) and destroy " +
      "leave the role's other members and the audit logging alone",
    async () => {
      const s = stackRunner(ws, "rp-member");
      await s.write({ m: member("m1", K.r1, ALICE) });
      const create = await s.planChanges();
      expect(create.stdout).toContain("# m will be created");
      expect(create.stdout).toContain("Access: 1 granted, 0 revoked");
      await s.apply();
      expect(await liveView(ws.emu, M1)).toEqual({
        bindings: expected([
          { role: K.r1, members: [ALICE, CAROL] },
          { role: K.r2, members: [DAN] },
        ]),
        auditConfigs: FOREIGN_AUDIT,
      });
      await s.expectNoChanges();

      // A member has no field to update in place: the in-place change is putting back a member
      // removed outside converge (drift), without touching carol.
      await setPolicyOutOfBand(ws.emu, M1, (p) => ({
        ...p,
        bindings: p.bindings!.map((b) => ({ ...b, members: b.members.filter((m) => m !== ALICE) })),
      }));
      const drift = await s.planChanges();
      expect(drift.stdout).toMatch(/# m (will be updated in-place|will be created)/);
      expect(drift.stdout).toContain("Access: 1 granted, 0 revoked");
      await s.apply();
      expect((await liveView(ws.emu, M1)).bindings).toEqual(
        expected([
          { role: K.r1, members: [ALICE, CAROL] },
          { role: K.r2, members: [DAN] },
        ]),
      );
      await s.expectNoChanges();

      // Replace: another role; carol keeps r1, dan keeps r2.
      await s.write({ m: member("m1", K.r2, ALICE) });
      const role = await s.planChanges();
      expect(role.stdout).toContain("# m must be replaced");
      expect(role.stdout).toContain("Access: 1 granted, 1 revoked");
      expect(role.stdout).toContain(`- ${ALICE} loses ${K.r1} on ${M1} (m)`);
      await s.apply();
      expect(await liveView(ws.emu, M1)).toEqual({
        bindings: expected([
          { role: K.r1, members: [CAROL] },
          { role: K.r2, members: [ALICE, DAN] },
        ]),
        auditConfigs: FOREIGN_AUDIT,
      });
      await s.expectNoChanges();

      // Replace: another object (full name).
      await s.write({ m: member(M2, K.r2, ALICE) });
      const moved = await s.planChanges();
      expect(moved.stdout).toContain("# m must be replaced");
      expect(moved.stdout).toContain(`- ${ALICE} loses ${K.r2} on ${M1} (m)`);
      await s.apply();
      expect(await liveView(ws.emu, M1)).toEqual({
        bindings: expected([
          { role: K.r1, members: [CAROL] },
          { role: K.r2, members: [DAN] },
        ]),
        auditConfigs: FOREIGN_AUDIT,
      });
      expect(await liveView(ws.emu, M2)).toEqual({
        bindings: expected([
          { role: K.r1, members: [CAROL] },
          { role: K.r2, members: [ALICE, DAN] },
        ]),
        auditConfigs: FOREIGN_AUDIT,
      });
      await s.expectNoChanges();

      const destroy = await s.cli("destroy", "--auto-approve");
      expectExit(destroy, 0);
      expect(await liveView(ws.emu, M2)).toEqual({
        bindings: expected([
          { role: K.r1, members: [CAROL] },
          { role: K.r2, members: [DAN] },
        ]),
        auditConfigs: FOREIGN_AUDIT,
      });
    },
  );

  it("converge import ADDRESS '{name} {role} {member} [condition]' adopts a member with no write", async () => {
    const COND = K.full("cond");
    const s = stackRunner(ws, "rp-member-import");
    await s.write({ plain: member(COND, K.r1, CAROL), temp: member("cond", K.r1, ALICE, { condition: UNTIL_2027 }) });
    await resetStats(ws.emu);
    expectExit(await s.cli("import", "plain", `${COND} ${K.r1} ${CAROL}`), 0);
    expectExit(await s.cli("import", "temp", `${COND} ${K.r1} ${ALICE} ${UNTIL_2027.title}`), 0);
    const state = await s.readState();
    expect(state.resources.map((r) => [r.address, r.type, r.id]).sort()).toEqual([
      ["plain", K.memberT, `${COND} ${K.r1} ${CAROL}`],
      ["temp", K.memberT, `${COND} ${K.r1} ${ALICE} ${UNTIL_2027.title}`],
    ]);
    await s.expectNoChanges();
    const bad = await s.cli("import", "plain", `${COND} ${K.r1}`);
    expectExit(bad, 1);
    expect(bad.stderr).toContain('expected "{name} {role} {member} [condition title]"');
    expect(setCalls(await stats(ws.emu))).toBe(0);
  });

  it("options.import adopts a present member with no write", async () => {
    const I1 = K.full("i1");
    const s = stackRunner(ws, "rp-member-options");
    await s.write({ carol: member("i1", K.r1, CAROL, {}, { import: `${I1} ${K.r1} ${CAROL}` }) });
    await resetStats(ws.emu);
    const plan = await s.planChanges();
    expect(plan.stdout).toContain("# carol will be imported\n");
    expect(plan.stdout).toContain("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.");
    const apply = await s.apply();
    expect(apply.stdout).toContain("1 imported, 0 added, 0 changed, 0 destroyed");
    expect(setCalls(await stats(ws.emu))).toBe(0);
    await s.expectNoChanges();
  });

  it(
    "import --generate --as member writes one member resource per grant that plans " +
      "as imports, applies with no write, then plans clean",
    async () => {
      const G1 = K.full("g1");
      await resetStats(ws.emu);
      const resources = await generateAndAdopt(ws, "rp-members", ["--as", "member", G1], 2);
      expect(resources.map((r) => r.type)).toEqual([K.memberT, K.memberT]);
      expect(resources.map((r) => r.options!.import).sort()).toEqual(
        [`${G1} ${K.r1} ${CAROL}`, `${G1} ${K.r2} ${DAN}`].sort(),
      );
      expect(setCalls(await stats(ws.emu))).toBe(0);
    },
  );
});

describe("EndpointIamBinding", { timeout: 120_000 }, () => {
  const B1 = E.full("b1");
  const B2 = E.full("b2");

  it(
    "create, update in place, replace (role, then object) and destroy " +
      "leave the other roles and the audit logging alone",
    async () => {
      const s = stackRunner(ws, "ep-binding");
      // Create: authoritative for r1, so carol (foreign) is revoked; dan on r2 stays.
      await s.write({ b: binding("b1", E.r1, [ALICE]) });
      const create = await s.planChanges();
      expect(create.stdout).toContain("# b will be created");
      expect(create.stdout).toContain("Access: 1 granted, 1 revoked");
      expect(create.stdout).toContain(`- ${CAROL} loses ${E.r1} on ${B1} (b)`);
      await s.apply();
      // An endpoint has no audit configs (aiplatform v1beta1's Policy has none).
      expect(await liveView(ws.emu, B1)).toEqual({
        bindings: expected([
          { role: E.r1, members: [ALICE] },
          { role: E.r2, members: [DAN] },
        ]),
        auditConfigs: undefined,
      });
      await s.expectNoChanges();

      await s.write({ b: binding("b1", E.r1, [ALICE, BOB]) });
      const update = await s.planChanges();
      expect(update.stdout).toContain("# b will be updated in-place");
      expect(update.stdout).toContain("Access: 1 granted, 0 revoked");
      await s.apply();
      expect((await liveView(ws.emu, B1)).bindings).toEqual(
        expected([
          { role: E.r1, members: [ALICE, BOB] },
          { role: E.r2, members: [DAN] },
        ]),
      );
      await s.expectNoChanges();

      // Replace: another role; the binding now owns r2 (dan goes), r1 is emptied.
      await s.write({ b: binding("b1", E.r2, [ALICE, BOB]) });
      const role = await s.planChanges();
      expect(role.stdout).toContain("# b must be replaced");
      expect(role.stdout).toContain(`- ${DAN} loses ${E.r2} on ${B1} (b)`);
      await s.apply();
      expect(await liveView(ws.emu, B1)).toEqual({
        bindings: expected([{ role: E.r2, members: [ALICE, BOB] }]),
        auditConfigs: undefined,
      });
      await s.expectNoChanges();

      // Replace: another object; b1 loses r2, b2's r1 (carol) stays.
      await s.write({ b: binding(B2, E.r2, [ALICE, BOB]) });
      const moved = await s.planChanges();
      expect(moved.stdout).toContain("# b must be replaced");
      await s.apply();
      expect(await liveView(ws.emu, B1)).toEqual({
        bindings: [],
        auditConfigs: undefined,
      });
      expect(await liveView(ws.emu, B2)).toEqual({
        bindings: expected([
          { role: E.r1, members: [CAROL] },
          { role: E.r2, members: [ALICE, BOB] },
        ]),
        auditConfigs: undefined,
      });
      await s.expectNoChanges();

      expectExit(await s.cli("destroy", "--auto-approve"), 0);
      expect(await liveView(ws.emu, B2)).toEqual({
        bindings: expected([{ role: E.r1, members: [CAROL] }]),
        auditConfigs: undefined,
      });
    },
  );

  it("converge import ADDRESS '{name} {role} [condition]' adopts bindings with no write", async () => {
    const COND = E.full("cond");
    const s = stackRunner(ws, "ep-binding-import");
    await s.write({
      plain: binding(COND, E.r1, [CAROL]),
      temp: binding("cond", E.r1, [ALICE], { condition: UNTIL_2027 }),
    });
    await resetStats(ws.emu);
    expectExit(await s.cli("import", "plain", `${COND} ${E.r1}`), 0);
    expectExit(await s.cli("import", "temp", `${COND} ${E.r1} ${UNTIL_2027.title}`), 0);
    expect((await s.readState()).resources.map((r) => [r.address, r.type, r.id]).sort()).toEqual([
      ["plain", E.bindingT, `${COND} ${E.r1}`],
      ["temp", E.bindingT, `${COND} ${E.r1} ${UNTIL_2027.title}`],
    ]);
    await s.expectNoChanges();
    expect(setCalls(await stats(ws.emu))).toBe(0);
  });

  it("options.import adopts a binding and updates it in place, revoking only members of its own role", async () => {
    const I2 = E.full("i2");
    const s = stackRunner(ws, "ep-binding-options");
    await s.write({ b: binding("i2", E.r1, [BOB], {}, { import: `${I2} ${E.r1}` }) });
    await resetStats(ws.emu);
    const plan = await s.planChanges();
    expect(plan.stdout).toContain("# b will be imported and updated in-place");
    expect(plan.stdout).toContain("Access: 1 granted, 1 revoked");
    expect(plan.stdout).toContain(`- ${CAROL} loses ${E.r1} on ${I2} (b)`);
    await s.apply();
    expect(setCalls(await stats(ws.emu))).toBe(1);
    expect(await liveView(ws.emu, I2)).toEqual({
      bindings: expected([
        { role: E.r1, members: [BOB] },
        { role: E.r2, members: [DAN] },
      ]),
      auditConfigs: undefined,
    });
    await s.expectNoChanges();
  });

  it(
    "import --generate (default --as binding, and --as binding) writes endpoint " +
      "bindings that plan as imports and apply with no write",
    async () => {
      const G1 = E.full("g1");
      await resetStats(ws.emu);
      for (const [file, as] of [
        ["ep-default", []],
        ["ep-bindings", ["--as", "binding"]],
      ] as const) {
        const resources = await generateAndAdopt(ws, file, [...as, G1], 2);
        expect(resources.map((r) => r.type)).toEqual([E.bindingT, E.bindingT]);
        expect(resources.map((r) => r.options!.import).sort()).toEqual([`${G1} ${E.r1}`, `${G1} ${E.r2}`].sort());
      }
      expect(setCalls(await stats(ws.emu))).toBe(0);
    },
  );
});
