// Issue 16: the whole-policy types (RestorePlanIamPolicy, EndpointIamPolicy) through the built CLI
// against a seeded emulator. Every object starts with foreign grants (carol, dan) and foreign audit
// logging: a policy resource removes them (the plan shows each revoke), sets its own audit configs
// (so the client's update mask includes auditConfigs), and destroy leaves an empty policy. Import
// by ID (CLI and options.import) and `import --generate --as policy`. Endpoints have no audit
// configs (aiplatform v1beta1's Policy has none): their steps about audit logging are skipped.
// Needs `npm run build`.
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectExit, resetStats, runCli, setPolicyOutOfBand, stats, useEmulatorWorkspace } from "./helpers.js";
import { setCalls } from "./apply-helpers.js";
import {
  ALICE,
  BOB,
  CAROL,
  DAN,
  ENDPOINT,
  ERIN,
  FOREIGN_AUDIT,
  RESTORE_PLAN,
  STACK_AUDIT,
  UNTIL_2027,
  auditOf,
  expected,
  familySeed,
  foreignPolicy,
  generateAndAdopt,
  liveView,
  setAuditOutOfBand,
  stackRunner,
  type Kind,
  type StackResource,
} from "./iam-family-helpers.js";

const ws = useEmulatorWorkspace(
  familySeed(["a1", "a2", "c1", "d1", "i1", "i2", "g1", "s1", "s2"]),
  "converge-iam-policy-type-",
);

const policy = (
  k: Kind,
  name: string,
  bindings: unknown[],
  auditConfigs?: unknown[],
  options?: Record<string, unknown>,
): StackResource => ({
  type: k.policyT,
  properties: { name, bindings, ...(auditConfigs && k.audit ? { auditConfigs } : {}) },
  ...(options ? { options } : {}),
});

const EMPTY = { bindings: [], auditConfigs: undefined };

/** Omitting auditConfigs removes the live ones; bindings stay. */
async function removeAudit(s: ReturnType<typeof stackRunner>, name: string, bindings: unknown[]): Promise<void> {
  await s.write({ pol: policy(RESTORE_PLAN, name.split("/").pop()!, bindings) });
  const unaudit = await s.planChanges();
  expect(unaudit.stdout).toContain("# pol will be updated in-place");
  expect(unaudit.stdout).toMatch(/- +logType += "DATA_WRITE"/);
  expect(unaudit.stderr).not.toContain("removes the audit logging");
  expect(unaudit.stdout).toContain("Access: 0 granted, 0 revoked");
  await s.apply();
  expect(await liveView(ws.emu, name)).toEqual({ bindings: expected(bindings as never), auditConfigs: undefined });
  await s.expectNoChanges();
}

describe.each([RESTORE_PLAN, ENDPOINT])("the whole-policy type of a $label", { timeout: 120_000 }, (k) => {
  const A1 = k.full("a1");
  const A2 = k.full("a2");

  it(
    "create removes foreign grants and audit logging, update sets and removes " +
      "audit configs, replace and destroy leave empty policies",
    async () => {
      const s = stackRunner(ws, `lifecycle-${k.label.replace(" ", "-")}`);

      // Create: carol is kept (declared), dan and the foreign audit logging are removed.
      await s.write({ pol: policy(k, "a1", [{ role: k.r1, members: [ALICE, CAROL] }]) });
      const create = await s.planChanges();
      expect(create.stdout).toContain("# pol will be created");
      expect(create.stdout).toMatch(new RegExp(`- "${DAN}" +# granted outside converge, will be revoked`));
      expect(create.stdout).toContain("Access: 1 granted, 1 revoked");
      expect(create.stdout).toContain(`- ${DAN} loses ${k.r2} on ${A1} (pol)`);
      expect(create.stdout).not.toContain(`${CAROL} loses`);
      await s.apply();
      expect(await liveView(ws.emu, A1)).toEqual({
        bindings: expected([{ role: k.r1, members: [ALICE, CAROL] }]),
        auditConfigs: undefined,
      });
      await s.expectNoChanges();

      // Update in place: carol out, a conditional binding and audit configs in.
      const bindings2 = [
        { role: k.r1, members: [ALICE] },
        { role: k.r2, members: [ERIN], condition: UNTIL_2027 },
      ];
      await s.write({ pol: policy(k, "a1", bindings2, STACK_AUDIT) });
      const update = await s.planChanges();
      expect(update.stdout).toContain("# pol will be updated in-place");
      expect(update.stdout).toContain("Access: 1 granted, 1 revoked");
      expect(update.stdout).toContain(`- ${CAROL} loses ${k.r1} on ${A1} (pol)`);
      if (k.audit) expect(update.stdout).toContain("DATA_WRITE");
      await s.apply();
      const a1View = { bindings: expected(bindings2), auditConfigs: auditOf(k, STACK_AUDIT) };
      expect(await liveView(ws.emu, A1)).toEqual(a1View);
      await s.expectNoChanges();

      // Omitting auditConfigs removes the live ones; bindings stay.
      if (k.audit) await removeAudit(s, A1, bindings2);

      // Replace: another object (short name); its foreign grants go, the old object is left empty.
      const bindings3 = [{ role: k.r1, members: [ALICE, BOB] }];
      await s.write({ pol: policy(k, "a2", bindings3, STACK_AUDIT) });
      const replace = await s.planChanges();
      expect(replace.stdout).toContain("# pol must be replaced");
      for (const [who, role, on] of [
        [CAROL, k.r1, A2],
        [DAN, k.r2, A2],
        [ALICE, k.r1, A1],
        [ERIN, k.r2, A1],
      ] as const)
        expect(replace.stdout).toMatch(new RegExp(`- ${who} loses ${role}( if "[^"]+")? on ${on} \\(pol\\)`));
      // In the block: alice's revoke on the old object inline, erin's in the bindings diff, once each.
      expect(replace.stdout).toContain(`- "${ALICE}"  # ${k.r1} on ${A1}: will be revoked`);
      for (const who of [ALICE, ERIN])
        expect(replace.stdout.match(new RegExp(`^ *- "${who}"`, "gm")), who).toHaveLength(1);
      await s.apply();
      const a2View = { bindings: expected(bindings3), auditConfigs: auditOf(k, STACK_AUDIT) };
      expect(await liveView(ws.emu, A2)).toEqual(a2View);
      expect(await liveView(ws.emu, A1)).toEqual(EMPTY);
      await s.expectNoChanges();

      // Destroy: no bindings and no audit configs left.
      const destroy = await s.cli("destroy", "--auto-approve");
      expectExit(destroy, 0);
      expect(destroy.stdout).toContain("1 destroyed");
      expect(await liveView(ws.emu, A2)).toEqual(EMPTY);
      expect((await s.readState()).resources).toEqual([]);
    },
  );

  it(
    "a saved plan moving a policy resource to another object applies with one " +
      "write per object, and both views of the move agree",
    async () => {
      const [S1, S2] = [k.full("s1"), k.full("s2")];
      const s = stackRunner(ws, `saved-${k.label.replace(" ", "-")}`);
      const bindings = [{ role: k.r2, members: [BOB] }];
      await s.write({ pol: policy(k, "s1", bindings, STACK_AUDIT) });
      await s.apply();
      await s.write({ pol: policy(k, "s2", bindings, STACK_AUDIT) });
      const planFile = join(ws.dir, `saved-${k.label.replace(" ", "-")}.plan.json`);
      const plan = await s.cli("plan", "--out", planFile);
      expectExit(plan, 0);
      expect(plan.stdout).toContain("Access: 1 granted, 3 revoked");
      expect(plan.stdout).toContain(`- ${BOB} loses ${k.r2} on ${S1} (pol)`);
      await resetStats(ws.emu);
      const apply = await runCli(["apply", planFile, "-f", s.file(), "--state", s.state()], {
        cwd: ws.dir,
        emulator: ws.emu,
      });
      expectExit(apply, 0);
      expect(setCalls(await stats(ws.emu))).toBe(2);
      expect(await liveView(ws.emu, S1)).toEqual(EMPTY);
      expect(await liveView(ws.emu, S2)).toEqual({
        bindings: expected(bindings),
        auditConfigs: auditOf(k, STACK_AUDIT),
      });
      await s.expectNoChanges();
    },
  );

  it("a grant and audit logging added outside converge are drift the next apply removes", async () => {
    const D1 = k.full("d1");
    const s = stackRunner(ws, `drift-${k.label.replace(" ", "-")}`);
    const bindings = [{ role: k.r1, members: [ALICE] }];
    await s.write({ pol: policy(k, "d1", bindings) });
    await s.apply();
    await setPolicyOutOfBand(ws.emu, D1, (p) => ({
      ...p,
      bindings: [...(p.bindings ?? []), { role: k.r2, members: [ERIN] }],
    }));
    if (k.audit) await setAuditOutOfBand(ws.emu, D1, FOREIGN_AUDIT);
    expect((await liveView(ws.emu, D1)).auditConfigs).toEqual(auditOf(k, FOREIGN_AUDIT));
    const plan = await s.planChanges();
    expect(plan.stdout).toContain("# pol will be updated in-place");
    expect(plan.stdout).toContain("Access: 0 granted, 1 revoked");
    expect(plan.stdout).toContain(`- ${ERIN} loses ${k.r2} on ${D1} (pol)`);
    if (k.audit) expect(plan.stdout).toMatch(/- +logType += "DATA_READ"/);
    await s.apply();
    expect(await liveView(ws.emu, D1)).toEqual({ bindings: expected(bindings), auditConfigs: undefined });
    await s.expectNoChanges();
  });

  it.skipIf(!k.audit)("the plan of a create shows the live audit logging it removes", async () => {
    const s = stackRunner(ws, `create-audit-${k.label.replace(" ", "-")}`);
    await s.write({ pol: policy(k, "c1", [{ role: k.r1, members: [CAROL] }]) });
    const create = await s.planChanges();
    expect(create.stdout).toContain("# pol will be created");
    // Its diff starts from nothing, so the plan warns at the resource, naming the logging removed.
    expect(create.stderr).toContain(
      `${basename(s.file())}:6:3: Warning: pol removes the audit logging configured on ` +
        `${k.full("c1")}: DATA_READ audit logging of allServices`,
    );
    const json = JSON.parse((await s.planChanges("--json")).stdout) as {
      converge: { diagnostics: { severity: string; summary: string; address?: string; line?: number }[] };
    };
    expect(json.converge.diagnostics).toEqual([
      expect.objectContaining({
        severity: "warning",
        address: "pol",
        line: 6,
        summary: expect.stringContaining("DATA_READ audit logging of allServices"),
      }),
    ]);
    // Declaring the live logging keeps it: no warning.
    await s.write({ pol: policy(k, "c1", [{ role: k.r1, members: [CAROL] }], FOREIGN_AUDIT) });
    const kept = await s.planChanges();
    expect(kept.stderr).not.toContain("removes the audit logging");
  });

  it("converge import ADDRESS {name} adopts the whole policy with no write; a malformed ID is refused", async () => {
    const I1 = k.full("i1");
    const s = stackRunner(ws, `import-${k.label.replace(" ", "-")}`);
    const seeded = foreignPolicy(k);
    await s.write({ pol: policy(k, I1, seeded.bindings!, FOREIGN_AUDIT) });
    await resetStats(ws.emu);

    const bad = await s.cli("import", "pol", `${I1} ${k.r1}`);
    expectExit(bad, 1);
    expect(bad.stderr).toContain('expected "{name}"');

    const imp = await s.cli("import", "pol", I1);
    expectExit(imp, 0);
    const state = await s.readState();
    expect(state.resources.map((r) => [r.address, r.type, r.id])).toEqual([["pol", k.policyT, I1]]);
    await s.expectNoChanges();
    expect(setCalls(await stats(ws.emu))).toBe(0);
    const i1View = { bindings: expected(seeded.bindings!), auditConfigs: auditOf(k, FOREIGN_AUDIT) };
    expect(await liveView(ws.emu, I1)).toEqual(i1View);
  });

  it(
    "options.import adopts the policy and updates it in place, revoking " +
      "the grants and audit logging it does not declare",
    async () => {
      const I2 = k.full("i2");
      const s = stackRunner(ws, `options-import-${k.label.replace(" ", "-")}`);
      await s.write({ pol: policy(k, "i2", [{ role: k.r1, members: [CAROL] }], undefined, { import: I2 }) });
      await resetStats(ws.emu);

      const plan = await s.planChanges();
      expect(plan.stdout).toContain("# pol will be imported and updated in-place");
      expect(plan.stdout).toContain(`# (import ID "${I2}")`);
      expect(plan.stdout).toContain("Access: 0 granted, 1 revoked");
      expect(plan.stdout).toContain(`- ${DAN} loses ${k.r2} on ${I2} (pol)`);
      if (k.audit) expect(plan.stdout).toMatch(/- +logType += "DATA_READ"/);
      expect(plan.stdout).toContain("Plan: 1 to import, 0 to add, 1 to change, 0 to destroy.");
      const apply = await s.apply();
      expect(apply.stdout).toContain("1 imported, 0 added, 1 changed, 0 destroyed");
      expect(setCalls(await stats(ws.emu))).toBe(1);
      expect(await liveView(ws.emu, I2)).toEqual({
        bindings: expected([{ role: k.r1, members: [CAROL] }]),
        auditConfigs: undefined,
      });
      expect((await s.readState()).resources.map((r) => r.id)).toEqual([I2]);
      await s.expectNoChanges();
    },
  );

  it(
    "import --generate --as policy writes one policy resource that plans as " +
      "an import, applies with no write, then plans clean",
    async () => {
      const G1 = k.full("g1");
      await resetStats(ws.emu);
      const [r] = await generateAndAdopt(ws, `generated-${k.label.replace(" ", "-")}`, ["--as", "policy", G1], 1);
      expect(r!.type).toBe(k.policyT);
      expect(r!.options).toEqual({ import: G1 });
      expect(r!.properties.auditConfigs).toEqual(auditOf(k, FOREIGN_AUDIT));
      expect(expected(r!.properties.bindings as never)).toEqual(expected(foreignPolicy(k).bindings!));
      expect(setCalls(await stats(ws.emu))).toBe(0);
      const g1View = { bindings: expected(foreignPolicy(k).bindings!), auditConfigs: auditOf(k, FOREIGN_AUDIT) };
      expect(await liveView(ws.emu, G1)).toEqual(g1View);
    },
  );
});
