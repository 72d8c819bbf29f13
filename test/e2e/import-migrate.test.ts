// `converge import --from-pulumi` / `--from-terraform` (issue 40, item 5) through the built CLI
// against an emulator seeded with the objects the fixtures (test/fixtures/migrate, written from
// Pulumi's and Terraform's documented formats) name: the stack written plans as imports only,
// applies with no policy written, then plans clean; a secret stays out of the stack; what cannot
// be adopted is warned about and listed; bad input is refused at its position, writing nothing.
// Needs `npm run build`.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { SET_EP, SET_RP } from "../support/emulator.js";
import { epName, rpName } from "../fixtures/builders.js";
import { expectExit, REPO, resetStats, runCli, stackTraceLines, stats, useEmulatorWorkspace } from "./helpers.js";

const FIXTURES = join(REPO, "test", "fixtures", "migrate");
const rp = (id: string) => rpName(id);
const ep = (id: string) => epName(id);
const BUSINESS_HOURS = {
  title: "business hours",
  description: "weekdays only",
  expression: 'request.time.getHours("Europe/Berlin") >= 9',
};
const UNTIL_2027 = { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };

// What the Pulumi stack and the Terraform state manage, live.
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    {
      name: rp("nightly"),
      policy: {
        version: 3,
        bindings: [
          { role: "roles/gkebackup.viewer", members: ["user:carol@example.com", "group:sre@example.com"] },
          { role: "roles/gkebackup.admin", members: ["user:dan@example.com"], condition: BUSINESS_HOURS },
        ],
      },
    },
    {
      name: rp("weekly"),
      policy: {
        bindings: [{ role: "roles/gkebackup.viewer", members: ["group:sre@example.com", "user:erin@example.com"] }],
      },
    },
    {
      name: rp("monthly"),
      policy: { bindings: [{ role: "roles/gkebackup.admin", members: ["group:backup-admins@example.com"] }] },
    },
  ],
  endpoints: [
    {
      name: ep("churn"),
      policy: {
        bindings: [
          {
            role: "roles/aiplatform.user",
            members: ["user:dana@example.com", "serviceAccount:bot@my-project.iam.gserviceaccount.com"],
          },
        ],
      },
    },
    {
      name: ep("fraud"),
      policy: {
        version: 3,
        bindings: [
          { role: "roles/aiplatform.user", members: ["user:frank@example.com"] },
          { role: "roles/aiplatform.user", members: ["user:gina@example.com"], condition: UNTIL_2027 },
        ],
      },
    },
  ],
};

const ws = useEmulatorWorkspace(SEED, "converge-import-migrate-");
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { emulator: ws.emu, cwd: ws.dir, env });

/** import → plan (imports only) → apply (no policy written) → plan (no changes). */
async function migrateAndAdopt(flag: string, fixture: string, out: string, secrets: Record<string, string>, n: number) {
  const gen = await cli(["import", flag, join(FIXTURES, fixture), "--out", join(ws.dir, out)]);
  expectExit(gen, 0);
  const text = await readFile(join(ws.dir, out), "utf8");
  const state = ["--state", join(ws.dir, `${out}.state.json`)];
  const env = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [`CONVERGE_VAR_${k}`, v]));
  await resetStats(ws.emu);
  const plan = await cli(["plan", "--detailed-exitcode", "-f", out, ...state], env);
  expect(plan.stderr).toBe("");
  expectExit(plan, 2);
  expect(plan.stdout).toContain(`Plan: ${n} to import, 0 to add, 0 to change, 0 to destroy.`);
  expect(plan.stdout).not.toMatch(/will be (created|updated|destroyed)|must be replaced|imported and updated/);
  // A secret input's value is not shown, in the import ID either.
  for (const v of Object.values(secrets)) expect(plan.stdout).not.toContain(v);
  const apply = await cli(["apply", "--auto-approve", "-f", out, ...state], env);
  expectExit(apply, 0);
  expect(apply.stdout).toContain(`${n} imported, 0 added, 0 changed, 0 destroyed`);
  const again = await cli(["plan", "--detailed-exitcode", "-f", out, ...state], env);
  expectExit(again, 0);
  expect(again.stdout).toContain("No changes");
  const st = await stats(ws.emu);
  expect(st.requests[SET_RP] ?? 0).toBe(0);
  expect(st.requests[SET_EP] ?? 0).toBe(0);
  return { gen, text };
}

describe("converge import --from-pulumi / --from-terraform", { timeout: 120_000 }, () => {
  it("a Pulumi export: imports only, nothing written, a secret as a secret input, the rest listed", async () => {
    const { gen, text } = await migrateAndAdopt(
      "--from-pulumi",
      "pulumi-export.json",
      "ml.yaml",
      { dana_user_member: "user:dana@example.com" },
      4,
    );
    expect(gen.stdout).toContain("Wrote 4 resources adopted from");
    expect(gen.stdout).toContain("dana_user_member");
    // One warning per resource not migrated, at its place in the export.
    const warnings = gen.stderr.split("\n").filter((l) => /not migrated/.test(l));
    expect(warnings).toHaveLength(2);
    expect(gen.stderr).toMatch(/pulumi-export\.json:\d+:\d+/);
    expect(gen.stderr).toContain("data-team");
    expect(gen.stderr).toContain("google-native:gkebackup/v1:RestorePlan)");
    // Listed in the stack too; the secret's ciphertext (and so its value) is not in it.
    expect(text).toMatch(/^# yaml-language-server: \$schema=.*schemas\/stack\.schema\.json$/m);
    expect(text).toMatch(/^# Not migrated \(2\)/m);
    expect(text).toMatch(/^# +urn:pulumi:prod::ml-access::google-native:gkebackup\/v1:RestorePlan::nightly /m);
    expect(text).not.toContain("ciphertext");
    expect(text).not.toContain("v1:Kq3mZs7hO0y3v2Wd");
    const stack = parse(text) as {
      name: string;
      provider: object;
      config: Record<string, object>;
      resources: Record<string, object>;
    };
    expect(stack.name).toBe("ml");
    expect(stack.provider).toEqual({ project: "my-project", location: "us-central1" });
    expect(stack.config).toEqual({ dana_user_member: expect.objectContaining({ type: "string", secret: true }) });
    expect(Object.keys(stack.resources)).toEqual(["nightly-viewers", "dan-admin", "dana-user", "bot-user"]);
  });

  it("a Terraform state (format 4): imports only, nothing written; a sensitive member a secret input", async () => {
    const { gen, text } = await migrateAndAdopt(
      "--from-terraform",
      "terraform.tfstate",
      "tf.yaml",
      { fraud_users_1_member: "user:gina@example.com" },
      4,
    );
    expect(gen.stderr.split("\n").filter((l) => /not migrated/.test(l))).toHaveLength(2);
    expect(text).not.toContain("gina");
    expect(text).toMatch(/^# +data\.google_iam_policy\.monthly \(google_iam_policy\): a data source/m);
  });

  it("terraform show -json: the same stack, planned as imports only", async () => {
    const gen = await cli([
      "import",
      "--from-terraform",
      join(FIXTURES, "terraform-show.json"),
      "--out",
      "show.yaml",
      "--name",
      "from-show",
    ]);
    expectExit(gen, 0);
    const stack = parse(await readFile(join(ws.dir, "show.yaml"), "utf8")) as { name: string; resources: object };
    expect(stack.name).toBe("from-show");
    const plan = await cli(["plan", "--detailed-exitcode", "-f", "show.yaml"], {
      CONVERGE_VAR_fraud_users_1_member: "user:gina@example.com",
    });
    expectExit(plan, 2);
    expect(plan.stdout).toContain("Plan: 4 to import, 0 to add, 0 to change, 0 to destroy.");
  });

  it("--out is not replaced without --force; with --force it is", async () => {
    const out = join(ws.dir, "taken.yaml");
    await writeFile(out, "# mine\n");
    const r = await cli(["import", "--from-pulumi", join(FIXTURES, "pulumi-export.json"), "--out", out]);
    expectExit(r, 1);
    expect(r.stderr).toContain("already exists");
    expect(await readFile(out, "utf8")).toBe("# mine\n");
    const forced = await cli([
      "import",
      "--from-pulumi",
      join(FIXTURES, "pulumi-export.json"),
      "--out",
      out,
      "--force",
    ]);
    expectExit(forced, 0);
    expect(await readFile(out, "utf8")).toContain("nightly-viewers");
  });

  it.each([
    ["not a deployment", "--from-pulumi", '{\n  "stack": "prod"\n}\n', /bad\.json:1:1: .*has no "version"/],
    [
      "an unknown version",
      "--from-pulumi",
      '{\n  "version": 2,\n  "deployment": {}\n}\n',
      /bad\.json:2:14: .*deployment version 2 is not supported/,
    ],
    [
      "an old Terraform state",
      "--from-terraform",
      '{\n  "version": 3,\n  "modules": []\n}\n',
      /bad\.json:2:14: .*state format version 3/,
    ],
    [
      "one with nothing to adopt",
      "--from-pulumi",
      '{"version": 3, "deployment": {"resources": [{"urn": ' +
        '"urn:pulumi:s::p::pulumi:pulumi:Stack::p-s", "type": "pulumi:pulumi:Stack"}]}}',
      /bad\.json.*holds no resource converge can adopt/,
    ],
  ])("refuses %s at its position, exit 1, writing nothing", async (_what, flag, body, message) => {
    const file = join(ws.dir, "bad.json");
    await writeFile(file, body);
    const out = join(ws.dir, "never.yaml");
    const r = await cli(["import", flag, file, "--out", out]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(message);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a file it cannot read, naming it", async () => {
    const out = join(ws.dir, "never.yaml");
    const r = await cli(["import", "--from-terraform", join(ws.dir, "no-such.tfstate"), "--out", out]);
    expectExit(r, 1);
    expect(r.stderr).toMatch(/cannot read Terraform state .*no-such\.tfstate: it does not exist/);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses options that do not apply: --generate, --group, names, no --out", async () => {
    const file = join(FIXTURES, "pulumi-export.json");
    const out = join(ws.dir, "never.yaml");
    const cases: [string[], RegExp][] = [
      [["--generate", "--out", out], /--generate reads the cloud and --from-pulumi reads a state/],
      [["--group", "--out", out], /--group is for --generate --as member/],
      [[rpName("nightly"), "--out", out], /takes no other arguments/],
      [[], /import --from-pulumi needs --out FILE/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(["import", "--from-pulumi", file, ...args]);
      expectExit(r, 1);
      expect(r.stderr).toMatch(message);
    }
    expect(existsSync(out)).toBe(false);
  });
});
