// Shared fixtures for the emulator tests: a seed world and a tiny raw-HTTP client over fetch.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, expect } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { jsonOrUndefined, lakeFederation, useFileEmulator } from "../support/emulator.js";

export const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
export const RP_OPEN = "projects/open-project/locations/us-central1/restorePlans/daily";
export const EP = "projects/my-project/locations/us-central1/endpoints/churn";
export const EP_OPEN = "projects/open-project/locations/europe-west1/endpoints/scorer";
export const FED = "projects/my-project/locations/us-central1/federations/lake";
export const FED_DEFAULTS = "projects/open-project/locations/us-central1/federations/bare";

export const ADMIN = { Authorization: "Bearer admin-token" };
export const VIEWER = { Authorization: "Bearer viewer-token" };

export function seedWorld(): EmulatorWorld {
  return {
    projects: {
      "my-project": {
        number: "123456789012",
        callers: { "admin-token": "user:admin@example.com", "viewer-token": "user:eve@example.com" },
        iamAdmins: ["user:admin@example.com"],
      },
    },
    restorePlans: [
      { name: RP, policy: { bindings: [{ role: "roles/gkebackup.viewer", members: ["user:carol@example.com"] }] } },
      { name: RP_OPEN },
    ],
    endpoints: [
      { name: EP, policy: { bindings: [{ role: "roles/aiplatform.user", members: ["group:ml@example.com"] }] } },
      { name: EP_OPEN },
    ],
    federations: [lakeFederation(FED, "my-project"), { name: FED_DEFAULTS }],
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" || body instanceof Uint8Array ? (body as string) : JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: jsonOrUndefined(text) };
}

/** The five calls, by full resource name; `base` may be read late (an emulator started in beforeAll). */
export function api(baseUrl: string | (() => string)) {
  const url = typeof baseUrl === "string" ? () => baseUrl : baseUrl;
  return {
    getRestorePlan: (name: string, version = 3, headers: Record<string, string> = {}) =>
      call(url(), "GET", `/v1/${name}:getIamPolicy?options.requestedPolicyVersion=${version}`, undefined, headers),
    setRestorePlan: (name: string, body: unknown, headers: Record<string, string> = {}) =>
      call(url(), "POST", `/v1/${name}:setIamPolicy`, body, headers),
    getEndpoint: (name: string, version = 3, headers: Record<string, string> = {}) =>
      call(
        url(),
        "POST",
        `/v1beta1/${name}:getIamPolicy?options.requestedPolicyVersion=${version}`,
        undefined,
        headers,
      ),
    setEndpoint: (name: string, body: unknown, headers: Record<string, string> = {}) =>
      call(url(), "POST", `/v1beta1/${name}:setIamPolicy`, body, headers),
    getFederation: (name: string, headers: Record<string, string> = {}) =>
      call(url(), "GET", `/v1alpha/${name}`, undefined, headers),
    admin: (method: string, path: string, body?: unknown) => call(url(), method, `/__emulator/${path}`, body),
  };
}

/**
 * The seed world served for the whole file, with `c` calling it; `resetEach` restores the seed
 * (and clears stats and faults) before each test.
 */
export function useSeededEmulator(o: { resetEach?: boolean } = {}): {
  emu: RunningEmulator;
  c: ReturnType<typeof api>;
} {
  const emu = useFileEmulator({ seed: seedWorld() });
  const c = api(() => emu.url);
  if (o.resetEach) {
    beforeEach(async () => {
      expect((await c.admin("POST", "reset")).status).toBe(200);
    });
  }
  return { emu, c };
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "converge-emulator-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const BASE64_ETAG = /^[A-Za-z0-9+/]{11}=$/;

export function expectEnvelope(r: HttpResult, code: number, status: string): void {
  if (r.status !== code || r.json?.error?.status !== status) {
    throw new Error(`expected ${code} ${status}, got ${r.status} ${r.text}`);
  }
  if (!r.headers.get("content-type")?.startsWith("application/json"))
    throw new Error(`not JSON: ${r.headers.get("content-type")}`);
  const details = r.json.error.details;
  if (r.json.error.code !== code || typeof r.json.error.message !== "string" || !Array.isArray(details))
    throw new Error(`bad envelope ${r.text}`);
  if (details[0]?.["@type"] !== "type.googleapis.com/google.rpc.ErrorInfo" || details[0]?.domain !== "googleapis.com")
    throw new Error(`bad ErrorInfo ${r.text}`);
}
