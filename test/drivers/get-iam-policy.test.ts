// getRestorePlanIamPolicy and getEndpointIamPolicy: the object named by the arguments, read
// through a CloudPort made of plain functions (result shape, NOT_FOUND).
import { describe, expect, it } from "vitest";
import { functionDriver, FUNCTION_TOKENS } from "../../src/drivers/registry.js";
import type { DataSourceDriver } from "../../src/drivers/types.js";
import type { CloudPort, PolicyKind } from "../../src/contracts/cloud-port.js";
import { statusOf } from "../../src/contracts/cloud-port.js";
import type { Policy } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";

const DEFAULTS = { project: "p1", location: "us-central1" };
const COND = { title: "t", description: "", expression: "true" };

const cases = [
  {
    token: "cloudnative:backup/v1:getRestorePlanIamPolicy",
    kind: "restorePlan",
    idKey: "restorePlanId",
    collection: "restorePlans",
  },
  {
    token: "cloudnative:aiplatform/v1beta1:getEndpointIamPolicy",
    kind: "endpoint",
    idKey: "endpointId",
    collection: "endpoints",
  },
] as const;

/** A port over `world` that records each read; writes are refused. */
function port(world: Record<string, Policy>) {
  const reads: string[] = [];
  const cloud: CloudPort = {
    getIamPolicy: async (kind: PolicyKind, name: string) => {
      reads.push(`${kind} ${name}`);
      return world[name] ? structuredClone(world[name]) : undefined;
    },
    getFederation: async () => {
      throw new Error("not read here");
    },
    modifyPolicy: async () => {
      throw new Error("a function never writes");
    },
  };
  return { cloud, reads };
}

describe.each(cases)("$token", ({ token, kind, idKey, collection }) => {
  const f = functionDriver(token) as DataSourceDriver;
  const full = (id: string, location = "us-central1", project = "p1") =>
    `projects/${project}/locations/${location}/${collection}/${id}`;

  it("is registered as a function of its kind", () => {
    expect(FUNCTION_TOKENS).toContain(token);
    expect(f.kind).toBe(kind);
    expect(f.resultNames).toEqual(["bindings", "auditConfigs", "etag", "version"]);
  });

  describe("objectName", () => {
    it("builds the full name from the id, location and project (defaulting to provider.project)", () => {
      expect(f.objectName({ [idKey]: "obj", location: "eu-west1" }, DEFAULTS)).toEqual({
        name: full("obj", "eu-west1"),
      });
      expect(f.objectName({ [idKey]: "obj", location: "eu-west1", project: "other" }, DEFAULTS)).toEqual({
        name: full("obj", "eu-west1", "other"),
      });
    });

    it("reports the argument at fault", () => {
      expect(f.objectName({ [idKey]: "obj", location: "eu" }, {})).toEqual({
        problem: { path: ["project"], message: expect.stringContaining("provider.project") },
      });
      expect(f.objectName({ [idKey]: "a/b", location: "eu" }, DEFAULTS)).toEqual({
        problem: { path: [idKey], message: `${idKey} "a/b" is not a valid identifier` },
      });
      expect(f.objectName({ [idKey]: "obj" }, DEFAULTS)).toEqual({
        problem: { path: ["location"], message: 'location "undefined" is not a valid identifier' },
      });
      expect(f.objectName({ [idKey]: "obj", location: "eu", project: "bad project" }, DEFAULTS)).toEqual({
        problem: { path: ["project"], message: expect.any(String) },
      });
    });
  });

  describe("read", () => {
    it(
      "returns the policy as the function's result: bindings canonical, " +
        "empty ones dropped, audit configs, etag, version",
      async () => {
        const N = full("obj");
        const { cloud, reads } = port({
          [N]: {
            version: 3,
            etag: "BwE=",
            bindings: [
              { role: "roles/a.b", members: ["user:zed@example.com", "user:Amy@example.com"] },
              { role: "roles/c.d", members: ["group:g@example.com"], condition: COND },
              { role: "roles/empty", members: [] },
            ],
            auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "ADMIN_READ" }] }],
          },
        });
        const result = await f.read(cloud, N);
        expect(reads).toEqual([`${kind} ${N}`]);
        expect(result).toEqual({
          bindings: [
            { role: "roles/a.b", members: ["user:Amy@example.com", "user:zed@example.com"] },
            { role: "roles/c.d", members: ["group:g@example.com"], condition: { title: "t", expression: "true" } },
          ],
          auditConfigs: [{ service: "allServices", auditLogConfigs: [{ logType: "ADMIN_READ" }] }],
          etag: "BwE=",
          version: 3,
        });
        expect(validate(f.resultSchema, result)).toEqual([]);
      },
    );

    it("an object with no policy set reads as an empty policy", async () => {
      const N = full("bare");
      const result = await f.read(port({ [N]: {} }).cloud, N);
      expect(result).toEqual({ bindings: [], auditConfigs: [], etag: "", version: 1 });
      expect(validate(f.resultSchema, result)).toEqual([]);
    });

    it("a missing object is an error whose status is NOT_FOUND", async () => {
      const N = full("gone");
      const err = await f.read(port({}).cloud, N).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(statusOf(err)).toBe("NOT_FOUND");
      expect((err as Error).message).toContain(N);
    });

    it("passes the signal to the port", async () => {
      const seen: (AbortSignal | undefined)[] = [];
      const cloud = {
        ...port({}).cloud,
        getIamPolicy: async (_k: PolicyKind, _n: string, s?: AbortSignal) => (seen.push(s), {}),
      };
      const signal = new AbortController().signal;
      await f.read(cloud, full("obj"), signal);
      expect(seen).toEqual([signal]);
    });
  });
});
