// Helpers for integration tests against the real emulator (src/emulator).
import { beforeEach } from "vitest";
import { CloudClient, type CloudClientOptions } from "../../src/cloud/client.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { lakeFederation, useFileEmulator } from "../support/emulator.js";

export const PROJECT = "my-project";
export const RP = `projects/${PROJECT}/locations/us-central1/restorePlans/nightly`;
export const RP2 = `projects/${PROJECT}/locations/us-central1/restorePlans/weekly`;
export const EP = `projects/${PROJECT}/locations/europe-west4/endpoints/churn`;
export const FED = `projects/${PROJECT}/locations/us-central1/federations/lake`;
export const LOCKED_RP = "projects/locked-project/locations/us-central1/restorePlans/secure";
export const ROLE = "roles/gkebackup.viewer";
export const UNTIL_2027 = { title: "until-2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")' };
export const AUDIT = [
  {
    service: "allServices",
    auditLogConfigs: [{ logType: "DATA_READ" as const, exemptedMembers: ["user:auditor@example.com"] }],
  },
];

export function world(): EmulatorWorld {
  return {
    projects: {
      [PROJECT]: { number: "123456789012" },
      "locked-project": {
        number: "210987654321",
        callers: { "admin-token": "user:admin@example.com", "viewer-token": "user:eve@example.com" },
        iamAdmins: ["user:admin@example.com"],
      },
    },
    restorePlans: [
      {
        name: RP,
        policy: {
          version: 3,
          bindings: [
            { role: "roles/owner", members: ["user:owner@example.com"] },
            { role: ROLE, members: ["user:carol@example.com"] },
            { role: ROLE, members: ["group:sre@example.com"], condition: UNTIL_2027 },
          ],
          auditConfigs: AUDIT,
        },
      },
      { name: RP2, policy: { bindings: [] } },
      { name: LOCKED_RP, policy: { bindings: [{ role: ROLE, members: ["user:carol@example.com"] }] } },
    ],
    endpoints: [
      {
        name: EP,
        policy: {
          version: 3,
          bindings: [
            { role: "roles/aiplatform.user", members: ["serviceAccount:runner@my-project.iam.gserviceaccount.com"] },
            { role: "roles/aiplatform.viewer", members: ["user:dana@example.com"], condition: UNTIL_2027 },
          ],
          // aiplatform v1beta1's Policy has no auditConfigs.
        },
      },
    ],
    federations: [lakeFederation(FED, PROJECT)],
  };
}

export interface EmulatorStats {
  requests: Record<string, number>;
  responses: Record<string, Record<string, number>>;
}

export async function admin<T = unknown>(url: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(
    `${url}/__emulator/${path}`,
    body === undefined
      ? {}
      : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) },
  );
  const text = await res.text();
  if (!res.ok) throw new Error(`emulator admin ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

export const stats = (url: string) => admin<EmulatorStats>(url, "stats");
export const setFaults = (url: string, faults: Record<string, unknown>) => admin(url, "faults", faults);
export const worldOf = (url: string) => admin<EmulatorWorld>(url, "world");

/** A client pointed at the emulator the way the CLI finds it: CLOUDNATIVE_EMULATOR_HOST. */
export function emulatorClient(
  hostPort: string,
  opts: Omit<CloudClientOptions, "env"> & { token?: string } = {},
): CloudClient {
  const { token, ...rest } = opts;
  return new CloudClient({
    env: { CLOUDNATIVE_EMULATOR_HOST: hostPort, ...(token ? { CLOUDNATIVE_ACCESS_TOKEN: token } : {}) },
    timeoutMs: 5_000,
    ...rest,
  });
}

/** One emulator seeded with world() for the file; its world and faults are reset before each test. */
export function useResetEmulator(): RunningEmulator {
  const emu = useFileEmulator({ seed: world() });
  beforeEach(async () => {
    await admin(emu.url, "reset", {});
    await setFaults(emu.url, {});
  });
  return emu;
}
