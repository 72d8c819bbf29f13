import { describe, expect, it, vi } from "vitest";
import { createTokenProvider } from "../../src/cloud/auth.js";
import { CloudClient, SET_IAM_POLICY_UPDATE_MASK } from "../../src/cloud/client.js";
import { resolveEndpoint } from "../../src/cloud/endpoint.js";
import { CloudError } from "../../src/cloud/errors.js";
import type { CloudEvent } from "../../src/cloud/cloud-events.js";
import type { Policy } from "../../src/generated/schemas.js";
import { TOOL_VERSION } from "../../src/base/version.js";
import { fakeFetch, googleError, json } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const EP = "projects/my-project/locations/europe-west4/endpoints/churn";
const FED = "projects/my-project/locations/us-central1/federations/lake";
const POLICY: Policy = {
  version: 1,
  bindings: [{ role: "roles/viewer", members: ["user:a@example.com"] }],
  etag: "BwXh",
};

function client(env: NodeJS.ProcessEnv, reply = json(200, POLICY), endpoint?: string) {
  const f = fakeFetch(() => reply);
  const c = new CloudClient({ env, fetch: f, ...(endpoint ? { endpoint } : {}), retry: { sleep: async () => {} } });
  return { c, f };
}

describe("CloudClient wire calls (real Google hosts)", () => {
  const env = { CLOUDNATIVE_ACCESS_TOKEN: "tok-123456" };

  it("restore plan getIamPolicy: GET /v1/{name}:getIamPolicy?options.requestedPolicyVersion=3", async () => {
    const { c, f } = client(env);
    const p = await c.getIamPolicy("restorePlan", RP);
    expect(p).toEqual(POLICY);
    expect(f.calls).toHaveLength(1);
    const r = f.calls[0]!;
    expect(r.method).toBe("GET");
    expect(r.url).toBe(`https://gkebackup.googleapis.com/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`);
    expect(r.body).toBeUndefined();
    expect(r.headers["user-agent"]).toBe(`converge/${TOOL_VERSION}`);
    expect(r.headers.authorization).toBe("Bearer tok-123456");
    expect(r.headers["content-type"]).toBeUndefined();
  });

  it("restore plan setIamPolicy: POST /v1/{name}:setIamPolicy with policy and update mask", async () => {
    const { c, f } = client(env);
    await c.setIamPolicy("restorePlan", RP, POLICY);
    const r = f.calls[0]!;
    expect(r.method).toBe("POST");
    expect(r.url).toBe(`https://gkebackup.googleapis.com/v1/${RP}:setIamPolicy`);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(r.body!)).toEqual({ policy: POLICY, updateMask: "bindings,etag" });
    expect(SET_IAM_POLICY_UPDATE_MASK).toBe("bindings,etag");
  });

  it(
    "endpoint getIamPolicy: POST " +
      "/v1beta1/{name}:getIamPolicy?options.requestedPolicyVersion=3 with an " +
      "empty body, regional host",
    async () => {
      const { c, f } = client(env);
      await c.getIamPolicy("endpoint", EP);
      const r = f.calls[0]!;
      expect(r.method).toBe("POST");
      expect(r.url).toBe(
        `https://europe-west4-aiplatform.googleapis.com/v1beta1/${EP}:getIamPolicy?options.requestedPolicyVersion=3`,
      );
      expect(r.body).toBeUndefined();
      expect(r.headers["content-type"]).toBe("application/json");
    },
  );

  it("endpoint setIamPolicy: POST /v1beta1/{name}:setIamPolicy on the regional host", async () => {
    const { c, f } = client(env);
    await c.setIamPolicy("endpoint", EP, POLICY);
    const r = f.calls[0]!;
    expect(r.method).toBe("POST");
    expect(r.url).toBe(`https://europe-west4-aiplatform.googleapis.com/v1beta1/${EP}:setIamPolicy`);
    // aiplatform v1beta1's SetIamPolicyRequest has no updateMask, its Policy no auditConfigs.
    expect(JSON.parse(r.body!)).toEqual({ policy: POLICY });
    await c.setIamPolicy(
      "endpoint",
      EP,
      { ...POLICY, auditConfigs: [{ service: "allServices" }] },
      { auditConfigs: true },
    );
    expect(JSON.parse(f.calls[1]!.body!)).toEqual({ policy: POLICY });
  });

  it("getFederation: GET /v1alpha/{name} on metastore.googleapis.com", async () => {
    const fed = { name: FED, state: "ACTIVE", backendMetastores: { "1": { name: "x", metastoreType: "BIGQUERY" } } };
    const { c, f } = client(env, json(200, fed));
    expect(await c.getFederation(FED)).toEqual(fed);
    const r = f.calls[0]!;
    expect(r.method).toBe("GET");
    expect(r.url).toBe(`https://metastore.googleapis.com/v1alpha/${FED}`);
  });

  it("does not percent-encode the name; ':' before the verb stays literal", async () => {
    const { c, f } = client(env);
    await c.getIamPolicy("restorePlan", "projects/p-1/locations/us-east1/restorePlans/a.b_c-d");
    expect(f.calls[0]!.url).toContain("/v1/projects/p-1/locations/us-east1/restorePlans/a.b_c-d:getIamPolicy?");
    expect(f.calls[0]!.url).not.toMatch(/%2F|%3A/i);
  });

  it("rejects a name that is not a full name of that kind before sending anything", async () => {
    const { c, f } = client(env);
    await expect(c.getIamPolicy("endpoint", RP)).rejects.toMatchObject({ status: "INVALID_ARGUMENT", attempts: 0 });
    await expect(c.getFederation("lake")).rejects.toThrow(/not a full federation name/);
    expect(f.calls).toHaveLength(0);
  });

  it("global aiplatform location uses the global host", () => {
    expect(resolveEndpoint({ env: {} }).baseUrl("aiplatform", "global")).toBe("https://aiplatform.googleapis.com");
  });
});

describe("endpoint resolution", () => {
  it("CLOUDNATIVE_EMULATOR_HOST wins over everything and sends all calls there", async () => {
    const env = { CLOUDNATIVE_EMULATOR_HOST: "127.0.0.1:8085" };
    const e = resolveEndpoint({ endpoint: "http://10.0.0.1:9000", env });
    expect(e.source).toBe("env");
    expect(e.google).toBe(false);
    for (const s of ["gkebackup", "aiplatform", "metastore"] as const)
      expect(e.baseUrl(s, "us-central1")).toBe("http://127.0.0.1:8085");

    const { c, f } = client(env, json(200, POLICY), "google");
    await c.getIamPolicy("endpoint", EP);
    // (The answer is a policy: not a federation, which the call says after sending it.)
    await expect(c.getFederation(FED)).rejects.toThrow(/not a valid federation/);
    expect(f.calls.map((r) => r.url)).toEqual([
      `http://127.0.0.1:8085/v1beta1/${EP}:getIamPolicy?options.requestedPolicyVersion=3`,
      `http://127.0.0.1:8085/v1alpha/${FED}`,
    ]);
    expect(f.calls[0]!.headers.authorization).toBeUndefined();
  });

  it("an http(s) endpoint receives every call", async () => {
    const { c, f } = client({}, json(200, POLICY), "http://localhost:9999/");
    await c.setIamPolicy("restorePlan", RP, POLICY);
    expect(f.calls[0]!.url).toBe(`http://localhost:9999/v1/${RP}:setIamPolicy`);
    expect(c.endpoint.source).toBe("endpoint");
  });

  it("google / undefined use the real hosts", () => {
    for (const endpoint of [undefined, "google"]) {
      const e = resolveEndpoint({ endpoint, env: {} });
      expect(e.google).toBe(true);
      expect(e.baseUrl("gkebackup")).toBe("https://gkebackup.googleapis.com");
      expect(e.baseUrl("metastore")).toBe("https://metastore.googleapis.com");
      expect(e.baseUrl("aiplatform", "us-central1")).toBe("https://us-central1-aiplatform.googleapis.com");
    }
  });

  it("rejects unknown endpoint values", () => {
    expect(() => resolveEndpoint({ endpoint: "ftp://x", env: {} })).toThrow(/not valid/);
    expect(() => resolveEndpoint({ endpoint: "embedded", env: {} })).toThrow(/embedded/);
  });
});

describe("auth", () => {
  it("CLOUDNATIVE_ACCESS_TOKEN beats GOOGLE_OAUTH_ACCESS_TOKEN beats ADC", async () => {
    const createAdc = vi.fn(() => ({ getAccessToken: async () => "adc-token" }));
    const both = createTokenProvider({
      google: true,
      createAdc,
      env: { CLOUDNATIVE_ACCESS_TOKEN: "a1", GOOGLE_OAUTH_ACCESS_TOKEN: "g1" },
    });
    expect(await both.getToken()).toBe("a1");
    const g = createTokenProvider({ google: true, createAdc, env: { GOOGLE_OAUTH_ACCESS_TOKEN: "g1" } });
    expect(await g.getToken()).toBe("g1");
    expect(createAdc).not.toHaveBeenCalled();
    const adc = createTokenProvider({ google: true, createAdc, env: {} });
    expect(adc.source).toBe("adc");
    expect(createAdc).not.toHaveBeenCalled(); // lazily, on first use
    expect(await adc.getToken()).toBe("adc-token");
    expect(await adc.getToken()).toBe("adc-token");
    expect(createAdc).toHaveBeenCalledTimes(1);
  });

  // With no credentials on the machine, each of a 1,200-policy plan's reads ran the library's
  // credential search again (the environment, the well-known file, the cached answer of the
  // metadata server): 1,200 searches for one answer. The first search is now shared by the calls
  // made while it runs, and its failure stands for the rest of the process.
  it(
    "ADC that cannot find credentials is asked once: calls in " + "flight share it, later calls get its error",
    async () => {
      let searches = 0;
      const createAdc = vi.fn(() => ({
        getAccessToken: async () => {
          searches++;
          await new Promise((r) => setTimeout(r, 5));
          throw new Error(
            "Could not load the default credentials. Browse to " +
              "https://cloud.google.com/docs/authentication/getting-started for more " +
              "information.",
          );
        },
      }));
      const p = createTokenProvider({ google: true, createAdc, env: {} });
      const first = await Promise.allSettled(Array.from({ length: 10 }, () => p.getToken()));
      const later = await Promise.allSettled([p.getToken(), p.getToken()]);
      expect(searches).toBe(1);
      for (const r of [...first, ...later]) {
        expect(r.status).toBe("rejected");
        expect(String((r as PromiseRejectedResult).reason.message)).toMatch(
          new RegExp(
            String.raw`^could not get Google Cloud credentials \(Application Default Credentials\): ` +
              String.raw`Could not load the default credentials\. Browse to .* Run ` +
              "`gcloud auth",
          ),
        );
      }
    },
  );

  it(
    "once ADC has given a token, a later failure (a refresh) is " + "not remembered: the next call asks again",
    async () => {
      const answers: (string | Error)[] = ["t1", new Error("network blip"), "t2"];
      const p = createTokenProvider({
        google: true,
        env: {},
        createAdc: () => ({
          getAccessToken: async () => {
            const a = answers.shift()!;
            if (a instanceof Error) throw a;
            return a;
          },
        }),
      });
      expect(await p.getToken()).toBe("t1");
      await expect(p.getToken()).rejects.toThrow(/network blip/);
      expect(await p.getToken()).toBe("t2");
    },
  );

  it("never touches ADC for an emulator: no token env means no Authorization header", async () => {
    const createAdc = vi.fn(() => ({ getAccessToken: async () => "adc-token" }));
    const p = createTokenProvider({ google: false, createAdc, env: {} });
    expect(await p.getToken()).toBeUndefined();
    expect(createAdc).not.toHaveBeenCalled();
    const { c, f } = client({}, json(200, POLICY), "http://127.0.0.1:1234");
    await c.getIamPolicy("restorePlan", RP);
    expect(f.calls[0]!.headers.authorization).toBeUndefined();
  });

  it("an emulator still gets the token from the environment", async () => {
    const { c, f } = client({ CLOUDNATIVE_ACCESS_TOKEN: "admin-token" }, json(200, POLICY), "http://127.0.0.1:1234");
    await c.getIamPolicy("restorePlan", RP);
    expect(f.calls[0]!.headers.authorization).toBe("Bearer admin-token");
  });

  it("ADC failure is an UNAUTHENTICATED CloudError with advice, not retried", async () => {
    const f = fakeFetch(() => json(200, POLICY));
    const tokens = createTokenProvider({
      google: true,
      env: {},
      createAdc: () => ({
        getAccessToken: async () => {
          throw new Error("Could not load the default credentials");
        },
      }),
    });
    const c = new CloudClient({ env: {}, fetch: f, tokens });
    const err = await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudError);
    expect((err as CloudError).status).toBe("UNAUTHENTICATED");
    expect((err as CloudError).message).toMatch(/gcloud auth application-default login/);
    expect(f.calls).toHaveLength(0);
  });

  it("tokens never leak into errors or events, even when the server echoes them", async () => {
    const token = "ya29.super-secret-token-value";
    const events: CloudEvent[] = [];
    const f = fakeFetch(() =>
      googleError(
        401,
        "UNAUTHENTICATED",
        `Request had invalid authentication credentials: Bearer ${token} (token ${token})`,
      ),
    );
    const c = new CloudClient({ env: { CLOUDNATIVE_ACCESS_TOKEN: token }, fetch: f, onEvent: (e) => events.push(e) });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
    expect(err.status).toBe("UNAUTHENTICATED");
    expect(f.calls).toHaveLength(1); // 401 is not retried
    const everything = JSON.stringify({ m: err.message, s: err.serverMessage, d: err.details, st: err.stack, events });
    expect(everything).not.toContain(token);
    expect(everything).not.toContain("super-secret");
    expect(err.message).toContain("[redacted]");
  });
});
