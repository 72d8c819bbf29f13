// `converge import --generate` (SPEC section 6) through the built CLI against a seeded emulator:
// the generated stack validates, plans as imports only, applies with no writes, and then plans
// clean. Needs `npm run build`.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Binding, EmulatorWorld, State } from "../../src/generated/schemas.js";
import { BINDING, EP, LOCATION as LOC, PROJECT, RP } from "../fixtures/builders.js";
import { SET_EP, SET_RP } from "../support/emulator.js";
import {
  expectExit,
  resetStats,
  runCli,
  stackTraceLines,
  stats,
  totalRequests,
  useEmulatorWorkspace,
} from "./helpers.js";

const ODD = `projects/${PROJECT}/locations/${LOC}/restorePlans/odd`;

const UNTIL_2027 = {
  title: "until-2027",
  description: "temporary access",
  expression: 'request.time < timestamp("2027-01-01T00:00:00Z")',
};
const BUSINESS_HOURS = {
  title: "business hours",
  description: "weekdays only",
  expression: 'request.time.getHours("Europe/Berlin") >= 9',
};

// 5 bindings on the restore plan: 4 roles, gkebackup.viewer both without and with a condition,
// 2 conditional (one with a title containing a space), one custom project role.
const RP_BINDINGS: Binding[] = [
  { role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] },
  { role: "roles/gkebackup.viewer", members: ["user:alice@example.com"], condition: UNTIL_2027 },
  { role: "roles/gkebackup.admin", members: ["user:dan@example.com"], condition: BUSINESS_HOURS },
  { role: "roles/gkebackup.backupAdmin", members: ["serviceAccount:backup@my-project.iam.gserviceaccount.com"] },
  { role: "projects/my-project/roles/customRestorer", members: ["domain:example.com"] },
];
// 4 members on the endpoint, over 2 roles.
const EP_BINDINGS: Binding[] = [
  {
    role: "roles/aiplatform.user",
    members: ["user:dana@example.com", "serviceAccount:bot@my-project.iam.gserviceaccount.com", "group:ml@example.com"],
  },
  { role: "roles/aiplatform.viewer", members: ["user:dana@example.com"] },
];
// Issue 12: live values holding "${" and "$$", which a stack reads as an interpolation and an
// escaped "$" unless the generated stack escapes them.
const DOLLARS_RP = `projects/${PROJECT}/locations/${LOC}/restorePlans/dollars`;
const DOLLARS_EP = `projects/${PROJECT}/locations/${LOC}/endpoints/dollars`;
const DOLLAR_CONDITION = {
  title: "cost ${team} $$",
  description: "pays ${amount}",
  expression: 'resource.name.startsWith("projects/_/x${team}$$")',
};
const DOLLAR_BINDINGS: Binding[] = [
  { role: "roles/gkebackup.viewer", members: ["user:pay${team}$$@example.com"], condition: DOLLAR_CONDITION },
  { role: "roles/gkebackup.admin", members: ["user:$${x}@example.com", "group:${ops}@example.com"] },
];
const DOLLAR_MEMBERS: Binding[] = [{ role: "roles/aiplatform.user", members: ["user:ml${team}@example.com"] }];
const EXPECTED_BINDINGS = RP_BINDINGS.length;
// `--as binding` (the default): one endpoint binding resource per role.
const EXPECTED_MEMBERS = EP_BINDINGS.length;
const EP_BINDING = "cloudnative:aiplatform/v1beta1:EndpointIamBinding";

const SEED: EmulatorWorld = {
  projects: { [PROJECT]: { number: "123456789012" } },
  restorePlans: [
    { name: RP, policy: { version: 3, bindings: RP_BINDINGS } },
    // A condition title with a run of two spaces: the import ID must keep it.
    {
      name: ODD,
      policy: {
        version: 3,
        bindings: [
          {
            role: "roles/gkebackup.viewer",
            members: ["user:erin@example.com"],
            condition: { title: "two  spaces", expression: "true" },
          },
        ],
      },
    },
    { name: DOLLARS_RP, policy: { version: 3, bindings: DOLLAR_BINDINGS } },
  ],
  endpoints: [
    { name: EP, policy: { bindings: EP_BINDINGS } },
    { name: DOLLARS_EP, policy: { bindings: DOLLAR_MEMBERS } },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-import-generate-");

const cli = (args: string[]) => runCli(args, { emulator: ws.emu, cwd: ws.dir });

interface GeneratedResource {
  type: string;
  properties: {
    name: string;
    role: string;
    members?: string[];
    member?: string;
    condition?: { title: string; expression: string; description?: string };
  };
  options: { import: string };
}
interface GeneratedStack {
  name: string;
  provider: Record<string, string>;
  resources: Record<string, GeneratedResource>;
}

// A generous timeout: every step is a fresh CLI process (about a second each on a busy machine).
describe("converge import --generate", { timeout: 90_000 }, () => {
  it("writes a stack that validates, plans only imports, applies with zero writes, then plans clean", async () => {
    await resetStats(ws.emu);
    const out = join(ws.dir, "adopted.yaml");
    const state = join(ws.dir, "adopted.json");

    const gen = await cli(["import", "--generate", RP, EP, "--out", out, "--name", "adopted"]);
    expectExit(gen, 0);
    expect(gen.stdout).toContain(`Wrote ${EXPECTED_BINDINGS + EXPECTED_MEMBERS} resources adopting 2 policies`);

    const text = await readFile(out, "utf8");
    const stack = parse(text) as GeneratedStack;
    expect(stack.name).toBe("adopted");
    expect(stack.provider).toEqual({ project: PROJECT, location: LOC });
    const entries = Object.entries(stack.resources);
    expect(entries).toHaveLength(EXPECTED_BINDINGS + EXPECTED_MEMBERS);

    // Readable, unique, valid names that say what they grant.
    const names = entries.map(([n]) => n);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
    for (const [name, r] of entries) {
      expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_-]*$/);
      expect(name.length).toBeLessThanOrEqual(64);
      const roleSlug = r.properties.role.split("/").pop()!.replace(/\./g, "_");
      expect(name).toContain(roleSlug);
      if (r.type === EP_BINDING) {
        expect(name.startsWith("churn_")).toBe(true);
      } else {
        expect(name.startsWith("nightly_")).toBe(true);
      }
      if (r.properties.condition) expect(name).toContain(r.properties.condition.title.replace(/[^A-Za-z0-9]+/g, "_"));
    }

    // Bindings: one per (role, condition), members and conditions kept, import IDs with titles.
    const bindings = entries.filter(([, r]) => r.type === BINDING).map(([, r]) => r);
    expect(bindings).toHaveLength(EXPECTED_BINDINGS);
    for (const b of RP_BINDINGS) {
      const g = bindings.find(
        (x) => x.properties.role === b.role && x.properties.condition?.title === b.condition?.title,
      );
      expect(g, `${b.role} ${b.condition?.title ?? ""}`).toBeDefined();
      expect(g!.properties.name).toBe(RP);
      expect([...g!.properties.members!].sort()).toEqual([...b.members].sort());
      if (b.condition) expect(g!.properties.condition).toEqual(b.condition);
      else expect(g!.properties.condition).toBeUndefined();
      expect(g!.options.import).toBe(`${RP} ${b.role}${b.condition ? ` ${b.condition.title}` : ""}`);
    }
    // The endpoint's bindings too (`--as member` is covered by iam-import and the unit tests).
    const epBindings = entries.filter(([, r]) => r.type === EP_BINDING).map(([, r]) => r);
    expect(epBindings.map((m) => `${m.properties.role} ${[...m.properties.members!].sort().join(",")}`).sort()).toEqual(
      EP_BINDINGS.map((b) => `${b.role} ${[...b.members].sort().join(",")}`).sort(),
    );
    for (const m of epBindings) {
      expect(m.properties.name).toBe(EP);
      expect(m.options.import).toBe(`${EP} ${m.properties.role}`);
    }

    const [valid, plan] = await Promise.all([
      cli(["validate", "-f", out]),
      cli(["plan", "--detailed-exitcode", "-f", out, "--state", state]),
    ]);
    expectExit(valid, 0);
    expectExit(plan, 2);
    expect(plan.stdout).toContain(
      `Plan: ${EXPECTED_BINDINGS + EXPECTED_MEMBERS} to import, 0 to add, 0 to change, 0 to destroy.`,
    );
    expect(plan.stdout.match(/ will be imported\n/g)).toHaveLength(EXPECTED_BINDINGS + EXPECTED_MEMBERS);
    expect(plan.stdout).not.toMatch(/will be (created|updated|destroyed)|must be replaced|imported and updated/);

    const apply = await cli(["apply", "--auto-approve", "-f", out, "--state", state]);
    expectExit(apply, 0);
    expect(apply.stdout).toContain(`${EXPECTED_BINDINGS + EXPECTED_MEMBERS} imported, 0 added, 0 changed, 0 destroyed`);
    const s = JSON.parse(await readFile(state, "utf8")) as State;
    expect(s.resources.map((r) => r.address).sort()).toEqual([...names].sort());
    for (const r of s.resources) expect(r.id).toBe(stack.resources[r.address]!.options.import);

    const again = await cli(["plan", "--detailed-exitcode", "-f", out, "--state", state]);
    expectExit(again, 0);

    const st = await stats(ws.emu);
    expect(st.requests[SET_RP]).toBe(0);
    expect(st.requests[SET_EP]).toBe(0);
  });

  it("fails cleanly, writing nothing, for an object that does not exist", async () => {
    const out = join(ws.dir, "missing.yaml");
    const r = await cli([
      "import",
      "--generate",
      `projects/${PROJECT}/locations/${LOC}/restorePlans/nosuch`,
      "--out",
      out,
    ]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(/restorePlans\/nosuch does not exist/);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it("keeps a condition title's inner whitespace, so the generated stack still plans as imports", async () => {
    const out = join(ws.dir, "odd.yaml");
    const gen = await cli(["import", "--generate", ODD, "--out", out, "--stack-name", "odd"]);
    expectExit(gen, 0);
    const stack = parse(await readFile(out, "utf8")) as GeneratedStack;
    const [r] = Object.values(stack.resources);
    expect(r!.properties.condition).toEqual({ title: "two  spaces", expression: "true" });
    expect(r!.options.import).toBe(`${ODD} roles/gkebackup.viewer two  spaces`);
    // BUG (src/drivers/iam-driver.ts, parseImportId): the ID is split on /\s+/ and the title
    // re-joined with single spaces, so "two  spaces" becomes "two spaces" and adopt() finds
    // "no binding for roles/gkebackup.viewer with condition "two spaces"".
    const plan = await cli(["plan", "--detailed-exitcode", "-f", out, "--state", join(ws.dir, "odd.json")]);
    expect(plan.stderr).toBe("");
    expectExit(plan, 2);
    expect(plan.stdout).toContain("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.");
  });
});

// Issue 12: values are written so that loading the generated stack gives them back exactly.
describe("converge import --generate: values holding $", { timeout: 90_000 }, () => {
  it('escapes "$", so members and conditions with "${" or "$$" plan as imports with the live values', async () => {
    const out = join(ws.dir, "dollars.yaml");
    const gen = await cli(["import", "--generate", DOLLARS_RP, DOLLARS_EP, "--out", out]);
    expectExit(gen, 0);
    const validate = await cli(["validate", "-f", out]);
    expectExit(validate, 0);
    const plan = await cli(["plan", "--json", "--detailed-exitcode", "-f", out]);
    expectExit(plan, 2);
    const changes = (
      JSON.parse(plan.stdout) as {
        resource_changes: {
          address: string;
          change: { actions: string[]; importing?: unknown; after: Record<string, unknown> };
        }[];
      }
    ).resource_changes;
    expect(changes.map((c) => [c.change.actions, c.change.importing !== undefined])).toEqual(
      changes.map(() => [["no-op"], true]),
    );
    const afters = changes.map((c) => c.change.after);
    const live = (binding: Binding) => ({
      role: binding.role,
      ...(binding.condition ? { condition: binding.condition } : {}),
    });
    expect(
      afters
        .filter((a) => a.name === DOLLARS_RP)
        .map((a) => ({ role: a.role, members: a.members, ...(a.condition ? { condition: a.condition } : {}) })),
    ).toEqual(
      expect.arrayContaining(DOLLAR_BINDINGS.map((b) => ({ ...live(b), members: expect.arrayContaining(b.members) }))),
    );
    expect(afters.filter((a) => a.name === DOLLARS_EP).flatMap((a) => a.members)).toEqual(DOLLAR_MEMBERS[0]!.members);
  });

  // Issue 18: --as member --group writes one resource per role with a forEach over its members;
  // each instance imports its own member ("$" escaped too).
  it(
    "groups a role's members into one forEach resource with " + "--group, planned as imports of each instance",
    async () => {
      const out = join(ws.dir, "grouped.yaml");
      const gen = await cli(["import", "--generate", EP, DOLLARS_EP, "--out", out, "--as", "member", "--group"]);
      expectExit(gen, 0);
      const stack = parse(await readFile(out, "utf8")) as {
        resources: Record<string, { options: { forEach?: unknown[] } }>;
      };
      expect(Object.values(stack.resources).every((r) => Array.isArray(r.options.forEach))).toBe(true);
      const plan = await cli(["plan", "--json", "--detailed-exitcode", "-f", out]);
      expectExit(plan, 2);
      const changes = (
        JSON.parse(plan.stdout) as {
          resource_changes: {
            address: string;
            index?: string;
            change: { actions: string[]; importing?: unknown; after: Record<string, unknown> };
          }[];
        }
      ).resource_changes;
      expect(changes).toHaveLength(EP_BINDINGS.reduce((n, b) => n + b.members.length, 0) + 1);
      expect(
        changes.every(
          (c) =>
            c.change.actions[0] === "no-op" && c.change.importing !== undefined && c.index === c.change.after.member,
        ),
      ).toBe(true);
      await expect(
        cli(["import", "--generate", EP, "--out", join(ws.dir, "no.yaml"), "--group"]).then((r) => r.code),
      ).resolves.toBe(1);
    },
  );
});

// Issue 11, item 8: --out never overwrites without --force, and the generated stack's name (which
// names its state) comes from --name or the out file, never a fixed name two stacks would share.
describe("converge import --generate: the out file and the stack name", { timeout: 90_000 }, () => {
  it("refuses to overwrite an existing --out file (no cloud call); --force replaces it", async () => {
    const out = join(ws.dir, "existing.yaml");
    await writeFile(out, "# my own stack\n");
    await resetStats(ws.emu);
    const refused = await cli(["import", "--generate", RP, "--out", out]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain(out);
    expect(refused.stderr).toContain("--force");
    expect(stackTraceLines(refused.stderr)).toEqual([]);
    expect(await readFile(out, "utf8")).toBe("# my own stack\n");
    expect(totalRequests(await stats(ws.emu))).toBe(0);

    const forced = await cli(["import", "--generate", RP, "--out", out, "--force"]);
    expectExit(forced, 0);
    expect((parse(await readFile(out, "utf8")) as GeneratedStack).resources).not.toEqual({});
  });

  it("names the stack after the out file (made to fit the name pattern), or after --name", async () => {
    const [spaced, named] = await Promise.all([
      cli(["import", "--generate", RP, "--out", join(ws.dir, "prod access.yaml")]),
      cli(["import", "--generate", EP, "--out", join(ws.dir, "endpoint.yaml"), "--name", "churn-team"]),
    ]);
    expectExit(spaced, 0);
    expectExit(named, 0);
    expect((parse(await readFile(join(ws.dir, "prod access.yaml"), "utf8")) as GeneratedStack).name).toBe(
      "prod-access",
    );
    expect((parse(await readFile(join(ws.dir, "endpoint.yaml"), "utf8")) as GeneratedStack).name).toBe("churn-team");
  });

  it(
    "refuses a --name outside the stack name pattern, and a name " + "whose default state already exists beside --out",
    async () => {
      const out = join(ws.dir, "bad-name.yaml");
      const bad = await cli(["import", "--generate", RP, "--out", out, "--name", "prod access"]);
      expectExit(bad, 1);
      expect(bad.stderr).toContain('"prod access"');
      expect(existsSync(out)).toBe(false);

      await mkdir(join(ws.dir, "state"), { recursive: true });
      await writeFile(join(ws.dir, "state", "taken.json"), "{}\n");
      await resetStats(ws.emu);
      const shared = await cli(["import", "--generate", RP, "--out", join(ws.dir, "taken.yaml")]);
      expectExit(shared, 1);
      expect(shared.stderr).toContain(join(ws.dir, "state", "taken.json"));
      expect(existsSync(join(ws.dir, "taken.yaml"))).toBe(false);
      expect(totalRequests(await stats(ws.emu))).toBe(0);
    },
  );
});
