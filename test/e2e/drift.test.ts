// `converge drift` through the built CLI against the emulator (needs `npm run build`): each class of
// drift (a)-(e) reported with exit 2 in text, JSON, Markdown and SARIF (validated against the SARIF
// 2.1.0 schema), exit 0 without drift; read-only (one read per policy, no write, state untouched);
// `--adopt` writes a stack whose plan is imports only; a `--remediate` plan applied makes the next
// drift exit 0.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import AjvModule from "ajv-draft-04";
import formatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import type { Policy } from "../../src/generated/schemas.js";
import { expectExit, resetStats, runCli, setPolicyOutOfBand, stats, useEmulatorWorkspace } from "./helpers.js";
import { getCalls, setCalls } from "./apply-helpers.js";
import { ALICE, BOB, ERIN, RESTORE_PLAN as K, stackRunner, UNTIL_2027 } from "./iam-family-helpers.js";

const MALLORY = "user:mallory@example.com";
const GRACE = "user:grace@example.com";
const FRANK = "user:frank@example.com";
const GONE_ERIN = `deleted:${ERIN}?uid=123456789`;
const LATER = { ...UNTIL_2027, expression: 'request.time < timestamp("2030-01-01T00:00:00Z")' };

const empty = (id: string) => ({ name: K.full(id), policy: { bindings: [] } });
const ws = useEmulatorWorkspace(
  { projects: { "my-project": { number: "123456789012" } }, restorePlans: [empty("cls"), empty("fix")] },
  "converge-drift-",
);

// CommonJS modules: their default export is the module object under NodeNext.
const Ajv = AjvModule.default;
const addFormats = formatsModule.default;
const SCHEMA = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/sarif/sarif-schema-2.1.0.json"), "utf8"));

/** Every class at once on `cls`: bob removed (a), mallory added to the binding (b), grace on the admin
 *  role no resource owns (c), erin deleted (d), frank's condition changed (e). */
function driftEverything(p: Policy): Policy {
  const bindings = p.bindings ?? [];
  const viewer = bindings.find((b) => b.role === K.r1)!;
  viewer.members = viewer.members.filter((m) => m !== BOB).concat(MALLORY);
  const admin = bindings.find((b) => b.role === K.r2 && !b.condition)!;
  admin.members = [GONE_ERIN, GRACE];
  bindings.find((b) => b.condition)!.condition = LATER;
  return { ...p, bindings };
}

const everyClass = () => ({
  viewers: { type: K.bindingT, properties: { name: "cls", role: K.r1, members: [ALICE, BOB] } },
  erin: { type: K.memberT, properties: { name: "cls", role: K.r2, member: ERIN } },
  frank: { type: K.memberT, properties: { name: "cls", role: K.r2, member: FRANK, condition: UNTIL_2027 } },
});

describe("converge drift", { timeout: 180_000 }, () => {
  it("reports each class with exit 2, read-only, in every format; exit 0 without drift", async () => {
    const s = stackRunner(ws, "cls");
    await s.write(everyClass());
    await s.apply();
    expectExit(await s.cli("drift"), 0);
    await setPolicyOutOfBand(ws.emu, K.full("cls"), driftEverything);
    const before = await readFile(s.state(), "utf8");
    await resetStats(ws.emu);
    const text = await s.cli("drift");
    expectExit(text, 2);
    const calls = await stats(ws.emu);
    expect([getCalls(calls), setCalls(calls)]).toEqual([1, 0]);
    expect(await readFile(s.state(), "utf8")).toBe(before);
    expect(text.stdout).toContain("Drift: 5 differences on 1 object (1 policy read)");
    expect(text.stdout).toContain(
      `(a) removed out of band: "${BOB}" lost "${K.r1}" on "${K.full("cls")}", which "viewers" grants`,
    );
    expect(text.stdout).toContain(`(b) added to a managed role: "${MALLORY}" was given "${K.r1}"`);
    expect(text.stdout).toContain('which "viewers" manages: the next apply revokes it');
    expect(text.stdout).toContain(`(c) unmanaged: "${GRACE}" holds "${K.r2}"`);
    expect(text.stdout).toContain(`(d) deleted principal: "${ERIN}" was deleted: "${GONE_ERIN}" holds`);
    expect(text.stdout).toContain(`(e) condition changed: "${FRANK}" holds "${K.r2}"`);

    const json = await s.cli("drift", "--json");
    expectExit(json, 2);
    const doc = JSON.parse(json.stdout) as { drift: boolean; findings: { class: string; member: string }[] };
    expect(doc.drift).toBe(true);
    expect(doc.findings.map((f) => f.class).sort()).toEqual([
      "added",
      "condition",
      "deleted-principal",
      "removed",
      "unmanaged",
    ]);

    const md = await s.cli("drift", "--format", "markdown");
    expectExit(md, 2);
    expect(md.stdout).toContain("| Class | Object | Role | Member | Resource | What happened |");
    expect(md.stdout).toContain(`| (a) removed out of band | \`${K.full("cls")}\``);

    const sarif = await s.cli("drift", "--format", "sarif");
    expectExit(sarif, 2);
    const log = JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; locations: unknown[] }[] }[] };
    // The schema's language pattern is not valid with the u flag: compiled as JSON Schema's ECMA 262 regex.
    const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
    const validate = addFormats(ajv).compile(SCHEMA);
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    expect(log.runs[0]!.results.map((r) => r.ruleId).sort()).toEqual([
      "drift/added",
      "drift/condition",
      "drift/deleted-principal",
      "drift/removed",
      "drift/unmanaged",
    ]);
    expect(await readFile(s.state(), "utf8")).toBe(before);

    // --adopt: a stack importing the unmanaged grant; its plan is imports only.
    const adopted = join(ws.dir, "cls-adopted.yaml");
    expectExit(await s.cli("drift", "--adopt", "--out", adopted), 2);
    const state = join(ws.dir, "cls-adopted.json");
    const plan = await runCli(["plan", "--detailed-exitcode", "-f", adopted, "--state", state], {
      cwd: ws.dir,
      emulator: ws.emu,
    });
    expectExit(plan, 2);
    expect(plan.stdout).toContain("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.");
    expect(await readFile(adopted, "utf8")).toContain(GRACE);
  });

  it("options that do not go together are an error before anything is read", async () => {
    const s = stackRunner(ws, "cls");
    await resetStats(ws.emu);
    const r = await s.cli("drift", "--adopt");
    expectExit(r, 1);
    expect(r.stderr).toContain("--adopt needs --out FILE");
    expect(r.stderr).not.toContain("internal error");
    const calls = await stats(ws.emu);
    expect(getCalls(calls) + setCalls(calls)).toBe(0);
  });

  it("a --remediate plan, reviewed and applied, restores the approved state: the next drift exits 0", async () => {
    const s = stackRunner(ws, "fix");
    await s.write({
      viewers: { type: K.bindingT, properties: { name: "fix", role: K.r1, members: [ALICE, BOB] } },
      erin: { type: K.memberT, properties: { name: "fix", role: K.r2, member: ERIN } },
    });
    await s.apply();
    await setPolicyOutOfBand(ws.emu, K.full("fix"), (p) => ({
      ...p,
      bindings: [{ role: K.r1, members: [ALICE, MALLORY] }],
    }));
    const plan = join(ws.dir, "fix.plan");
    const r = await s.cli("drift", "--remediate", "--out", plan);
    expectExit(r, 2);
    expect(r.stderr).toContain(`Saved the plan restoring 2 resources (erin, viewers) to ${plan}`);
    const shown = await s.cli("show", plan);
    expectExit(shown, 0);
    expect(shown.stdout).toContain(MALLORY);
    expectExit(await s.cli("apply", plan), 0);
    const after = await s.cli("drift");
    expectExit(after, 0);
    expect(after.stdout).toContain("No drift");
  });
});
