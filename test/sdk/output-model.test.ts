// Pulumi's Output model in the SDK: all, concat, secret/unsecret, jsonStringify, Promises as
// inputs, and `.apply` on a pending value (run once it settles).
import { describe, expect, it } from "vitest";
import { all, concat } from "../../src/sdk/combine.js";
import {
  encode,
  interpolate,
  isSecretOutput,
  jsonStringify,
  output,
  referenceOutput,
  secret,
  settled,
  unsecret,
} from "../../src/sdk/output.js";

const encoded = async (v: unknown) => encode(await settled(v));

describe("the Output model", () => {
  it("all and concat of known values are known; of references, interpolations", async () => {
    expect(await encoded(all([output(1), 2, Promise.resolve("x")]).apply(([a, b, c]) => `${a + b}${c}`))).toBe("3x");
    expect(await encoded(all({ a: output("p"), b: Promise.resolve("q") }).apply((m) => m.a + m.b))).toBe("pq");
    const etag = referenceOutput<string>("viewers", ["etag"]);
    expect(encode(concat("e-", etag, "-", 7))).toBe("e-${viewers.etag}-7");
    expect(encode(all([etag, "x"]))).toEqual(["${viewers.etag}", "x"]);
  });

  it("a secret stays secret through apply, and is fn::secret in the document", () => {
    const s = secret("hunter2");
    expect(isSecretOutput(s.apply((v) => v.length))).toBe(true);
    expect(encode(s)).toEqual({ "fn::secret": "hunter2" });
    expect(encode(unsecret(s))).toBe("hunter2");
    // Text made with a secret is secret, known or not.
    expect(encode(interpolate`user:${s}@example.com`)).toEqual({ "fn::secret": "user:hunter2@example.com" });
    const later = secret(referenceOutput<string>("v", ["etag"]));
    expect(encode(concat("e-", later))).toEqual({ "fn::secret": "e-${v.etag}" });
  });

  it("jsonStringify is text when known, fn::toJSON when a part is known later", () => {
    expect(encode(jsonStringify({ a: output(1), b: ["x"] }))).toBe('{"a":1,"b":["x"]}');
    expect(encode(jsonStringify({ a: referenceOutput("v", ["etag"]) }))).toEqual({ "fn::toJSON": { a: "${v.etag}" } });
  });

  it("apply on a Promise's output runs once it settles", async () => {
    const o = output(new Promise<number>((r) => setTimeout(() => r(20), 1))).apply((n) => n + 1);
    expect(await encoded({ n: o })).toEqual({ n: 21 });
  });
});
