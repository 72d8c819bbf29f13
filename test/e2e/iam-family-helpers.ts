// Shared by the end-to-end tests of the full IAM family (issue 16): the six type tokens and the two
// functions per object kind, a seed where every object already holds foreign grants and audit
// configs, and a per-stack CLI runner that writes the stack, runs the built CLI against the test
// emulator and checks that the next plan is "No changes.".
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { parse, stringify } from "yaml";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { AuditConfig, Binding, EmulatorWorld, Policy, State } from "../../src/generated/schemas.js";
import { expectExit, livePolicy, runCli, type CliResult } from "./helpers.js";
import { ep, normalBindings, rp } from "./apply-helpers.js";

export const ALICE = "user:alice@example.com";
export const BOB = "user:bob@example.com";
export const CAROL = "user:carol@example.com";
export const DAN = "user:dan@example.com";
export const ERIN = "user:erin@example.com";

export const UNTIL_2027 = {
  title: "until-2027",
  description: "temporary access",
  expression: 'request.time < timestamp("2027-01-01T00:00:00Z")',
};

/** The audit logging every seeded object starts with (none of the stacks' resources declare it). */
export const FOREIGN_AUDIT: AuditConfig[] = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" }] }];
/** The audit logging policy resources declare. */
export const STACK_AUDIT: AuditConfig[] = [
  { service: "allServices", auditLogConfigs: [{ logType: "DATA_WRITE", exemptedMembers: ["user:bot@example.com"] }] },
];

export interface Kind {
  label: string;
  full: (id: string) => string;
  policyT: string;
  bindingT: string;
  memberT: string;
  fn: string;
  /** The function's argument naming the object's id. */
  idArg: string;
  /** Two roles valid on the object. */
  r1: string;
  r2: string;
  /** Its API version's Policy has auditConfigs (aiplatform v1beta1's has none). */
  audit: boolean;
}

export const RESTORE_PLAN: Kind = {
  label: "restore plan",
  full: rp,
  policyT: "cloudnative:backup/v1:RestorePlanIamPolicy",
  bindingT: "cloudnative:backup/v1:RestorePlanIamBinding",
  memberT: "cloudnative:backup/v1:RestorePlanIamMember",
  fn: "cloudnative:backup/v1:getRestorePlanIamPolicy",
  idArg: "restorePlanId",
  r1: "roles/gkebackup.viewer",
  r2: "roles/gkebackup.admin",
  audit: true,
};

export const ENDPOINT: Kind = {
  label: "endpoint",
  full: ep,
  policyT: "cloudnative:aiplatform/v1beta1:EndpointIamPolicy",
  bindingT: "cloudnative:aiplatform/v1beta1:EndpointIamBinding",
  memberT: "cloudnative:aiplatform/v1beta1:EndpointIamMember",
  fn: "cloudnative:aiplatform/v1beta1:getEndpointIamPolicy",
  idArg: "endpointId",
  r1: "roles/aiplatform.user",
  r2: "roles/aiplatform.viewer",
  audit: false,
};

/** The policy every seeded object starts with: carol on r1, dan on r2, and FOREIGN_AUDIT where
 *  the kind has audit configs. */
export const foreignPolicy = (k: Kind): Policy => ({
  bindings: [
    { role: k.r1, members: [CAROL] },
    { role: k.r2, members: [DAN] },
  ],
  ...(k.audit ? { auditConfigs: FOREIGN_AUDIT } : {}),
});

/** `auditConfigs` as a kind holds them: undefined for one without audit configs. */
export const auditOf = (k: Kind, auditConfigs: AuditConfig[]): AuditConfig[] | undefined =>
  k.audit ? auditConfigs : undefined;

/** Restore plans and endpoints with these ids, each holding foreignPolicy. */
export function familySeed(ids: string[]): EmulatorWorld {
  return {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: ids.map((id) => ({ name: rp(id), policy: foreignPolicy(RESTORE_PLAN) })),
    endpoints: ids.map((id) => ({ name: ep(id), policy: foreignPolicy(ENDPOINT) })),
  };
}

export interface StackResource {
  type: string;
  properties: Record<string, unknown>;
  options?: Record<string, unknown>;
}

/** A stack file and its own state in `dir`, and the CLI run against `emu` on them. */
export function stackRunner(ws: { readonly emu: RunningEmulator; readonly dir: string }, name: string) {
  const file = () => join(ws.dir, `${name}.yaml`);
  const state = () => join(ws.dir, `${name}.json`);
  const cli = (...args: string[]): Promise<CliResult> =>
    runCli([...args, "-f", file(), "--state", state()], { cwd: ws.dir, emulator: ws.emu });
  return {
    file,
    state,
    cli,
    async write(resources: Record<string, StackResource>, extra: Record<string, unknown> = {}): Promise<void> {
      await writeFile(
        file(),
        stringify({ name, provider: { project: "my-project", location: "us-central1" }, ...extra, resources }),
      );
    },
    /** `plan --detailed-exitcode` that must find changes (exit 2); its output. */
    async planChanges(...args: string[]): Promise<CliResult> {
      const r = await cli("plan", "--detailed-exitcode", ...args);
      expectExit(r, 2);
      return r;
    },
    async apply(): Promise<CliResult> {
      const r = await cli("apply", "--auto-approve");
      expectExit(r, 0);
      return r;
    },
    async expectNoChanges(): Promise<void> {
      const r = await cli("plan", "--detailed-exitcode");
      expectExit(r, 0);
      expect(r.stdout).toContain("No changes.");
    },
    async readState(): Promise<State> {
      return JSON.parse(await readFile(state(), "utf8")) as State;
    },
  };
}

/** The live policy as comparable data: bindings normalised, audit configs as stored. */
export async function liveView(
  emu: RunningEmulator,
  name: string,
): Promise<{ bindings: Binding[]; auditConfigs: AuditConfig[] | undefined }> {
  const p = await livePolicy(emu, name);
  return { bindings: normalBindings(p), auditConfigs: p.auditConfigs };
}

/** Bindings as normalBindings gives them, from a literal list. */
export function expected(bindings: Binding[]): Binding[] {
  return normalBindings({ bindings });
}

/** Sets a policy's audit configs through the public API, as gcloud would (the update mask names
 *  auditConfigs: without it setIamPolicy leaves them as they are). */
export async function setAuditOutOfBand(
  emu: RunningEmulator,
  name: string,
  auditConfigs: AuditConfig[],
): Promise<void> {
  const isEndpoint = name.includes("/endpoints/");
  const prefix = isEndpoint ? "v1beta1" : "v1";
  const get = await fetch(`${emu.url}/${prefix}/${name}:getIamPolicy?options.requestedPolicyVersion=3`, {
    method: isEndpoint ? "POST" : "GET",
  });
  if (!get.ok) throw new Error(`getIamPolicy ${name}: ${get.status} ${await get.text()}`);
  const current = (await get.json()) as Policy;
  const set = await fetch(`${emu.url}/${prefix}/${name}:setIamPolicy`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ policy: { ...current, auditConfigs }, updateMask: "auditConfigs" }),
  });
  if (!set.ok) throw new Error(`setIamPolicy ${name}: ${set.status} ${await set.text()}`);
  await set.text();
}

/**
 * `import --generate ...args --out FILE` against `emu`, then the generated stack's plan (imports
 * only), apply (imports, no write) and next plan ("No changes."). Returns the generated resources.
 */
export async function generateAndAdopt(
  ws: { readonly emu: RunningEmulator; readonly dir: string },
  file: string,
  args: string[],
  count: number,
): Promise<StackResource[]> {
  const out = join(ws.dir, `${file}.yaml`);
  const state = ["--state", join(ws.dir, `${file}.json`)];
  const cli = (...a: string[]) => runCli(a, { cwd: ws.dir, emulator: ws.emu });
  expectExit(await cli("import", "--generate", ...args, "--out", out), 0);
  const resources = Object.values(
    (parse(await readFile(out, "utf8")) as { resources: Record<string, StackResource> }).resources,
  );
  expect(resources).toHaveLength(count);
  const plan = await cli("plan", "--detailed-exitcode", "-f", out, ...state);
  expectExit(plan, 2);
  expect(plan.stdout).toContain(`Plan: ${count} to import, 0 to add, 0 to change, 0 to destroy.`);
  expect(plan.stdout).not.toMatch(/will be (created|updated|destroyed)|must be replaced|imported and updated/);
  const apply = await cli("apply", "--auto-approve", "-f", out, ...state);
  expectExit(apply, 0);
  expect(apply.stdout).toContain(`${count} imported, 0 added, 0 changed, 0 destroyed`);
  const again = await cli("plan", "--detailed-exitcode", "-f", out, ...state);
  expectExit(again, 0);
  expect(again.stdout).toContain("No changes.");
  return resources;
}
