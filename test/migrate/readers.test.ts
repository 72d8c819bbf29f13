// The readers of other tools' states (src/migrate): a Pulumi deployment (version 3) and a
// Terraform state (format 4, and `terraform show -json`), written from their documented formats
// under test/fixtures/migrate, mapped to converge's types; bad input refused at its position.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import { readSourceFile } from "../../src/migrate/file.js";
import { SecretValue } from "../../src/migrate/model.js";
import { readPulumiExport } from "../../src/migrate/pulumi.js";
import { migratedStack } from "../../src/migrate/stack.js";
import { readTerraformState } from "../../src/migrate/terraform.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "migrate");
const RP = "projects/my-project/locations/us-central1/restorePlans";
const EP = "projects/my-project/locations/us-central1/endpoints";

const pulumi = () => readPulumiExport(readSourceFile(join(FIXTURES, "pulumi-export.json"), "Pulumi export"));
const terraform = (file: string) => readTerraformState(readSourceFile(join(FIXTURES, file), "Terraform state"));

/** The UserError `fn` throws, as its first diagnostic. */
function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as UserError).diagnostics[0]!;
  }
  throw new Error("expected a UserError");
}

const dir = mkdtempSync(join(tmpdir(), "converge-migrate-"));
function fileWith(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe("Pulumi export (deployment version 3)", () => {
  it("maps google-native and converge tokens; a secret becomes a secret input; the rest is listed", () => {
    const { resources, notes } = pulumi();
    expect(notes).toEqual([]);
    // The stack and the provider are Pulumi's own: not resources of the cloud.
    expect(resources.map((r) => r.name)).toEqual([
      "nightly-viewers",
      "dan-admin",
      "data-team",
      "dana-user",
      "bot-user",
      "nightly",
    ]);
    const m = migratedStack(resources);
    expect(m.firstName).toBe(`${RP}/nightly`);
    expect(m.resources["nightly-viewers"]).toEqual({
      type: "cloudnative:backup/v1:RestorePlanIamBinding",
      properties: {
        name: `${RP}/nightly`,
        role: "roles/gkebackup.viewer",
        members: ["user:carol@example.com", "group:sre@example.com"],
      },
      options: { import: `${RP}/nightly roles/gkebackup.viewer` },
    });
    const condition = {
      title: "business hours",
      description: "weekdays only",
      expression: 'request.time.getHours("Europe/Berlin") >= 9',
    };
    expect(m.resources["dan-admin"]).toEqual({
      type: "cloudnative:backup/v1:RestorePlanIamMember",
      properties: { name: `${RP}/nightly`, role: "roles/gkebackup.admin", member: "user:dan@example.com", condition },
      options: { import: `${RP}/nightly roles/gkebackup.admin user:dan@example.com business hours` },
    });
    expect(m.resources["dana-user"]).toEqual({
      type: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
      properties: { name: `${EP}/churn`, role: "roles/aiplatform.user", member: "${dana_user_member}" },
      options: { import: `${EP}/churn roles/aiplatform.user \${dana_user_member}` },
    });
    expect(m.config).toEqual({
      dana_user_member: { type: "string", secret: true, description: expect.stringContaining("dana-user") },
    });
    expect(Object.keys(m.resources)).toEqual(["nightly-viewers", "dan-admin", "dana-user", "bot-user"]);
    expect(m.unmapped.map((u) => [u.address.split("::").pop(), u.reason])).toEqual([
      ["data-team", expect.stringContaining("component resource")],
      ["nightly", expect.stringContaining("converge has no type for google-native:gkebackup/v1:RestorePlan")],
    ]);
  });

  it("never keeps a secret's text, from its ciphertext or its plaintext (--show-secrets)", () => {
    const plain = {
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      plaintext: '["user:hidden@example.com"]',
    };
    const dep = {
      version: 3,
      deployment: {
        resources: [
          {
            urn: "urn:pulumi:s::p::google-native:gkebackup/v1:RestorePlanIamBinding::b",
            custom: true,
            type: "google-native:gkebackup/v1:RestorePlanIamBinding",
            inputs: { name: `${RP}/x`, role: "roles/gkebackup.viewer", members: plain },
          },
        ],
      },
    };
    const { resources } = readPulumiExport(
      readSourceFile(fileWith("plain.json", JSON.stringify(dep)), "Pulumi export"),
    );
    expect(resources[0]!.properties.members).toEqual(new SecretValue("list"));
    const m = migratedStack(resources);
    expect(JSON.stringify(m)).not.toContain("hidden");
    expect(m.config.b_members).toMatchObject({ type: "list", secret: true });
  });

  it("completes a short name from the project and region of the resource's provider", () => {
    const provider = "urn:pulumi:s::p::pulumi:providers:google-native::eu";
    const binding = "google-native:gkebackup/v1:RestorePlanIamBinding";
    const resources = [
      {
        urn: provider,
        custom: true,
        id: "42",
        type: "pulumi:providers:google-native",
        inputs: { project: "eu-project", region: "europe-west1" },
      },
      {
        urn: `urn:pulumi:s::p::${binding}::b`,
        custom: true,
        type: binding,
        provider: `${provider}::42`,
        inputs: { name: "nightly", role: "roles/y", members: ["user:a@example.com"] },
      },
    ];
    const f = fileWith("provider.json", JSON.stringify({ version: 3, deployment: { resources } }));
    const m = migratedStack(readPulumiExport(readSourceFile(f, "Pulumi export")).resources);
    const name = "projects/eu-project/locations/europe-west1/restorePlans/nightly";
    expect(m.resources.b).toMatchObject({ properties: { name }, options: { import: `${name} roles/y` } });
  });

  it("maps the Pulumi gcp provider's types as Terraform's (project, location, a short name, policyData)", () => {
    const member = "gcp:vertex/aiEndpointIamMember:AiEndpointIamMember";
    const policy = "gcp:gkebackup/restorePlanIamPolicy:RestorePlanIamPolicy";
    const where = { project: "my-project", location: "us-central1" };
    const condition = { title: "t", description: "", expression: "true" };
    const policyData = JSON.stringify({ bindings: [{ role: "roles/z", members: ["user:b@example.com"] }] });
    const resources = [
      {
        urn: `urn:pulumi:s::p::${member}::m`,
        custom: true,
        type: member,
        inputs: { ...where, endpoint: "e", role: "roles/x", member: "user:a@example.com", condition },
      },
      { urn: `urn:pulumi:s::p::${policy}::p`, custom: true, type: policy, inputs: { ...where, name: "r", policyData } },
    ];
    const f = fileWith("gcp.json", JSON.stringify({ version: 3, deployment: { resources } }));
    const m = migratedStack(readPulumiExport(readSourceFile(f, "Pulumi export")).resources);
    expect(m.resources).toEqual({
      m: {
        type: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
        properties: {
          name: `${EP}/e`,
          role: "roles/x",
          member: "user:a@example.com",
          condition: { title: "t", expression: "true" },
        },
        options: { import: `${EP}/e roles/x user:a@example.com t` },
      },
      p: {
        type: "cloudnative:backup/v1:RestorePlanIamPolicy",
        properties: { name: `${RP}/r`, bindings: [{ role: "roles/z", members: ["user:b@example.com"] }] },
        options: { import: `${RP}/r` },
      },
    });
  });

  it("warns about pending operations; a secret condition or member list is a map or list input", () => {
    const secret = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:x" };
    const urn = (t: string, n: string) => `urn:pulumi:s::p::${t}::${n}`;
    const member = "google-native:aiplatform/v1beta1:EndpointIamMember";
    const binding = "google-native:gkebackup/v1:RestorePlanIamBinding";
    const resources = [
      {
        urn: urn(member, "m"),
        custom: true,
        type: member,
        inputs: { name: `${EP}/e`, role: "roles/x", member: "user:a@example.com", condition: secret },
      },
      {
        urn: urn(binding, "b"),
        custom: true,
        type: binding,
        inputs: { name: `${RP}/r`, role: "roles/y", members: secret },
      },
    ];
    const dep = { version: 3, deployment: { resources, pending_operations: [{ type: "creating", resource: {} }] } };
    const read = readPulumiExport(
      readSourceFile(fileWith("pending.json", JSON.stringify(dep, null, 2)), "Pulumi export"),
    );
    expect(read.notes).toEqual([
      expect.objectContaining({ severity: "warning", summary: expect.stringMatching(/1 pending operation:/) }),
    ]);
    const m = migratedStack(read.resources);
    expect(m.config).toEqual({
      m_condition: expect.objectContaining({ type: "map", secret: true }),
      b_members: expect.objectContaining({ type: "list", secret: true }),
    });
    expect(m.resources.m).toMatchObject({
      properties: { condition: "${m_condition}" },
      options: { import: `${EP}/e roles/x user:a@example.com \${m_condition.title}` },
    });
    expect(m.resources.b).toMatchObject({ properties: { members: "${b_members}" } });
  });

  it.each([
    ["not an object", "[1, 2]", 1, 1, /is not a `pulumi stack export` file/],
    ["no version", '{\n  "deployment": {}\n}', 1, 1, /has no "version"/],
    ["an unknown version", '{\n  "version": 4,\n  "deployment": {}\n}', 2, 14, /deployment version 4 is not supported/],
    ["no deployment", '{\n  "version": 3\n}', 1, 1, /has no "deployment" object/],
    ["not JSON", '{\n  "version": 3,\n  "deployment": {]\n}', 3, 18, /is not JSON/],
  ])("refuses %s at its position", (_what, text, line, column, summary) => {
    const f = fileWith("bad.json", text);
    const d = refusal(() => readPulumiExport(readSourceFile(f, "Pulumi export")));
    expect(d).toMatchObject({ severity: "error", file: f, line, column });
    expect(d.summary).toMatch(summary);
  });

  it("refuses a file it cannot read, naming it", () => {
    const d = refusal(() => readSourceFile(join(dir, "nope.json"), "Pulumi export"));
    expect(d.summary).toMatch(/cannot read Pulumi export .*nope\.json: it does not exist/);
    expect(refusal(() => readSourceFile(dir, "Pulumi export")).summary).toMatch(/is a directory, not a regular file/);
  });
});

describe("Terraform state (format 4) and terraform show -json", () => {
  for (const file of ["terraform.tfstate", "terraform-show.json"]) {
    it(`maps the google provider's IAM types of ${file}; a sensitive attribute becomes a secret input`, () => {
      const read = terraform(file);
      expect(read.map((r) => r.address)).toEqual([
        "data.google_iam_policy.monthly",
        "google_gke_backup_restore_plan.weekly",
        "google_gke_backup_restore_plan_iam_binding.weekly_viewers",
        "google_gke_backup_restore_plan_iam_policy.monthly",
        "module.ml.google_vertex_ai_endpoint_iam_member.fraud_users[0]",
        "module.ml.google_vertex_ai_endpoint_iam_member.fraud_users[1]",
      ]);
      const m = migratedStack(read);
      expect(m.resources).toEqual({
        weekly_viewers: {
          type: "cloudnative:backup/v1:RestorePlanIamBinding",
          properties: {
            name: `${RP}/weekly`,
            role: "roles/gkebackup.viewer",
            members: ["group:sre@example.com", "user:erin@example.com"],
          },
          options: { import: `${RP}/weekly roles/gkebackup.viewer` },
        },
        monthly: {
          type: "cloudnative:backup/v1:RestorePlanIamPolicy",
          properties: {
            name: `${RP}/monthly`,
            bindings: [{ role: "roles/gkebackup.admin", members: ["group:backup-admins@example.com"] }],
          },
          options: { import: `${RP}/monthly` },
        },
        fraud_users_0: {
          type: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
          properties: { name: `${EP}/fraud`, role: "roles/aiplatform.user", member: "user:frank@example.com" },
          options: { import: `${EP}/fraud roles/aiplatform.user user:frank@example.com` },
        },
        fraud_users_1: {
          type: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
          properties: {
            name: `${EP}/fraud`,
            role: "roles/aiplatform.user",
            member: "${fraud_users_1_member}",
            condition: { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' },
          },
          options: { import: `${EP}/fraud roles/aiplatform.user \${fraud_users_1_member} until-2027` },
        },
      });
      expect(Object.keys(m.config)).toEqual(["fraud_users_1_member"]);
      expect(JSON.stringify(m)).not.toContain("gina");
      expect(m.unmapped.map((u) => [u.address, u.reason])).toEqual([
        ["data.google_iam_policy.monthly", expect.stringContaining("a data source")],
        [
          "google_gke_backup_restore_plan.weekly",
          expect.stringContaining("converge has no type for google_gke_backup_restore_plan"),
        ],
      ]);
    });
  }

  it.each([
    ["state version 3", '{\n  "version": 3,\n  "resources": []\n}', 2, 14, /state format version 3 is not supported/],
    ["no version", '{\n  "resources": []\n}', 1, 1, /is not a Terraform state .* it has no "version"/],
    ["a JSON format 2", '{\n  "format_version": "2.0"\n}', 2, 21, /format_version "2.0" is not supported/],
    [
      "a plan's JSON",
      '{\n  "format_version": "1.2",\n  "planned_values": {}\n}',
      1,
      1,
      /is the JSON of a plan, not of a state/,
    ],
    ["HCL", 'resource "google_x" "y" {\n  a = 1\n}\n', 1, 1, /is not JSON|is not a Terraform state/],
  ])("refuses %s at its position", (_what, text, line, column, summary) => {
    const f = fileWith("bad.tfstate", text);
    const d = refusal(() => readTerraformState(readSourceFile(f, "Terraform state")));
    expect(d).toMatchObject({ severity: "error", file: f, line, column });
    expect(d.summary).toMatch(summary);
  });
});
