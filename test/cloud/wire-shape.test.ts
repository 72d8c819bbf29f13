// Issue 12: what the cloud answers is checked before use. A policy or federation of the wrong
// shape is a clear error naming the call and the object, made once (not retried), and never a
// policy misread: a string of members is not taken for its characters.
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import type { CloudError } from "../../src/cloud/errors.js";
import { federationProblem, policyProblem } from "../../src/cloud/wire-shape.js";
import { fakeFetch, json } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const FED = "projects/my-project/locations/us-central1/federations/lake";
const ROLE = "roles/gkebackup.viewer";

describe("policyProblem", () => {
  it.each<[string, unknown, string]>([
    [
      "members as a string",
      { bindings: [{ role: ROLE, members: "user:alice@example.com" }] },
      "bindings[0].members must be array",
    ],
    ["bindings as an object", { bindings: { role: ROLE, members: [] } }, "bindings must be array"],
    ["a binding without role", { bindings: [{ members: [] }] }, "bindings[0] must have required property 'role'"],
    [
      "a member that is not a string",
      { bindings: [{ role: ROLE, members: [7] }] },
      "bindings[0].members[0] must be string",
    ],
    ["an etag that is not a string", { etag: 7 }, "etag must be string"],
    ["a version that is a string", { version: "3" }, "version must be integer; version must be one of 0, 1, 3"],
    ["an array", [], "(top level) must be object"],
    ["null", null, "(top level) must be object"],
  ])("%s", (_what, value, problem) => {
    expect(policyProblem(value)).toBe(`the response is not a valid IAM policy: ${problem}`);
  });

  it("accepts a policy, and fields a later API version may add", () => {
    expect(policyProblem({})).toBeUndefined();
    expect(
      policyProblem({
        version: 3,
        etag: "ACAB",
        bindings: [{ role: ROLE, members: ["user:a@example.com"], condition: { title: "t", expression: "true" } }],
      }),
    ).toBeUndefined();
    expect(policyProblem({ bindings: [{ role: ROLE, members: [], futureField: 1 }], futureTop: {} })).toBeUndefined();
  });
});

describe("federationProblem", () => {
  it("refuses wrong types, accepts states and fields this version does not know", () => {
    expect(federationProblem({ name: FED, labels: "data-eng" })).toBe(
      "the response is not a valid federation: labels must be object",
    );
    expect(
      federationProblem({ name: FED, backendMetastores: { "1": { name: 5, metastoreType: "BIGQUERY" } } }),
    ).toMatch(/backendMetastores\[1\]\.name must be string/);
    expect(federationProblem("lake")).toMatch(/must be object/);
    expect(
      federationProblem({ name: FED, state: "MIGRATING", satisfiesPzs: true, createTime: "yesterday" }),
    ).toBeUndefined();
  });
});

describe("the client checks every answer", () => {
  const client = (body: unknown) => {
    const f = fakeFetch(() => json(200, body));
    return {
      c: new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: f, retry: { sleep: async () => {} } }),
      f,
    };
  };

  it(
    "getIamPolicy with members as a string: one attempt, an error " + "naming the call, never one-character members",
    async () => {
      const { c, f } = client({ bindings: [{ role: ROLE, members: "user:alice@example.com" }], etag: "ACAB" });
      const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as CloudError;
      expect(err.message).toBe(
        `getIamPolicy ${RP}: UNKNOWN (200): the response is not a valid IAM policy: bindings[0].members must be array`,
      );
      expect(err.retryable).toBe(false);
      expect(f.calls).toHaveLength(1);
    },
  );

  it("setIamPolicy's answer is checked too", async () => {
    const { c } = client({ bindings: { role: ROLE } });
    await expect(c.setIamPolicy("restorePlan", RP, { bindings: [], etag: "ACAB" })).rejects.toThrow(
      `setIamPolicy ${RP}: UNKNOWN (200): the response is not a valid IAM policy: bindings must be array`,
    );
  });

  it("getFederation of the wrong shape", async () => {
    const { c } = client({ name: FED, labels: ["data-eng"] });
    await expect(c.getFederation(FED)).rejects.toThrow(
      `getFederation ${FED}: UNKNOWN (200): the response is not a valid federation: labels must be object`,
    );
  });

  it("invalid JSON says so, with the parser's reason", async () => {
    const f = fakeFetch(() => ({ status: 200, body: '{"bindings": [' }));
    const c = new CloudClient({ endpoint: "http://127.0.0.1:1", env: {}, fetch: f });
    await expect(c.getIamPolicy("restorePlan", RP)).rejects.toThrow(
      new RegExp(`^getIamPolicy ${RP}: UNKNOWN \\(200\\): the response is not valid JSON \\(.+\\)$`),
    );
  });
});
