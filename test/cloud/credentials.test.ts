// Issue 12: credentials never leave their place. A proxy's user:password (or its Basic header)
// echoed back by a server is scrubbed from every message; user:password in an endpoint or in
// CLOUDNATIVE_EMULATOR_HOST is never sent, shown or described; a malformed
// CLOUDNATIVE_EMULATOR_HOST is a clear EndpointError (never a DNS lookup of a bare name).
import { describe, expect, it } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { EndpointError, resolveEndpoint, withoutCredentials } from "../../src/cloud/endpoint.js";
import { redact, userinfoSecrets } from "../../src/cloud/errors.js";
import { proxySecrets } from "../../src/cloud/proxy.js";
import { fakeFetch, json } from "./fakes.js";

const RP = "projects/my-project/locations/us-central1/restorePlans/nightly";
const BASIC = Buffer.from("alice:s3cret pw").toString("base64");

describe("redact", () => {
  it("scrubs Basic headers and the user:password of URLs, whatever the secrets list holds", () => {
    expect(redact(`proxy-authorization: Basic ${BASIC}\nProxy-Authorization: basic ${BASIC}`)).toBe(
      "proxy-authorization: Basic [redacted]\nProxy-Authorization: basic [redacted]",
    );
    expect(redact("refused http://alice:s3cret@proxy.corp:3128/ and socks5://bob:pw@x")).toBe(
      "refused http://[redacted]@proxy.corp:3128/ and socks5://[redacted]@x",
    );
  });

  it("userinfoSecrets gives every form an error page may echo", () => {
    const s = userinfoSecrets("http://alice:s3cret%20pw@proxy.corp:3128");
    expect(s).toEqual(
      expect.arrayContaining(["alice:s3cret%20pw", "alice:s3cret pw", BASIC, "s3cret%20pw", "s3cret pw"]),
    );
    expect(userinfoSecrets("alice:s3cret@proxy.corp:3128")).toContain("s3cret");
    expect(userinfoSecrets("http://proxy.corp:3128")).toEqual([]);
    expect(userinfoSecrets(undefined)).toEqual([]);
  });

  it("proxySecrets reads HTTPS_PROXY and HTTP_PROXY in either case", () => {
    const s = proxySecrets({ https_proxy: "http://a:topsecret@p:1", HTTP_PROXY: "http://b:othersecret@p:2" });
    expect(s).toEqual(expect.arrayContaining(["topsecret", "othersecret"]));
  });
});

// A server that echoes part of the token (its first 20 characters, a middle slice in a log line)
// printed that part: only the whole token was redacted. Any slice of 8 characters or more of a
// secret of 8 or more is redacted now, wherever it sits.
describe("redact: slices of a secret", () => {
  const TOKEN = "ya30.a0AfB_byC9xQ7mZk2LpWn4RtVs8Hd3Jf6Ge1Ui5Oy0Tq";

  it.each([
    ["its first 20 characters", TOKEN.slice(0, 20)],
    ["a slice from the middle", TOKEN.slice(13, 29)],
    ["its last 8 characters", TOKEN.slice(-8)],
    ["exactly 8 characters", TOKEN.slice(30, 38)],
  ])("redacts %s", (_what, slice) => {
    const out = redact(`invalid credentials: token "${slice}..." rejected`, [TOKEN]);
    expect(out).toBe('invalid credentials: token "[redacted]..." rejected');
  });

  it("redacts every slice, adjacent or overlapping ones as one, and leaves the rest of the text", () => {
    const a = TOKEN.slice(0, 10);
    const b = TOKEN.slice(25, 40);
    expect(redact(`x ${a} y ${b} z ${a}${b}`, [TOKEN])).toBe("x [redacted] y [redacted] z [redacted]");
    expect(redact(`x ${TOKEN.slice(0, 12)}${TOKEN.slice(5, 20)} y`, [TOKEN])).toBe("x [redacted] y");
  });

  it("leaves slices shorter than 8 characters, and text sharing nothing with the secret", () => {
    expect(redact(`t=${TOKEN.slice(0, 7)}!`, [TOKEN])).toBe(`t=${TOKEN.slice(0, 7)}!`);
    expect(redact("nothing to see here", [TOKEN])).toBe("nothing to see here");
  });

  it("a secret shorter than 8 characters is still redacted only whole", () => {
    expect(redact("pw hunter2 and hunt", ["hunter2"])).toBe("pw [redacted] and hunt");
  });

  it("answers at once for a long text and many secrets", () => {
    const text = `${"ab".repeat(200_000)}${TOKEN.slice(3, 30)}`;
    expect(redact(text, [TOKEN, ...Array.from({ length: 20 }, (_, i) => `${TOKEN}${i}`)]).endsWith("[redacted]")).toBe(
      true,
    );
    const long = Array.from(
      { length: 2048 },
      (_, i) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[(i * 7919) % 64],
    ).join("");
    const t2 = Date.now();
    expect(redact(`a ${long} b ${long} c ${long.slice(100, 1900)}`, [long])).toBe(
      "a [redacted] b [redacted] c [redacted]",
    );
    // Bounded, not quadratic: the margin is for a loaded machine (it used to be 1 s).
    expect(Date.now() - t2).toBeLessThan(30_000);
  });
});

describe("the client scrubs what a server echoes", () => {
  it("a proxy's password, raw, decoded and as Basic, never reaches a message", async () => {
    const env = { HTTP_PROXY: "http://alice:s3cret%20pw@127.0.0.1:3128", CLOUDNATIVE_ACCESS_TOKEN: "tok-abcdef" };
    const echo = `407 for alice:s3cret pw (s3cret%20pw) Proxy-Authorization: Basic ${BASIC} token tok-abcdef`;
    const f = fakeFetch(() => json(407, { error: { code: 407, message: echo } }));
    // A name that is not loopback, so the proxy applies; the fake fetch answers for it.
    const c = new CloudClient({ endpoint: "http://iam.example.invalid:8080", env, fetch: f });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("[redacted]");
    for (const secret of ["s3cret", BASIC, "tok-abcdef"]) expect(err.message).not.toContain(secret);
  });

  it("a slice of the access token echoed by the server never reaches a message", async () => {
    const token = "ya29.c.b0AXv0zTQ9kLmNpQrStUvWxYz0123456789abcdefGHIJ";
    const f = fakeFetch(() =>
      json(401, {
        error: {
          code: 401,
          status: "UNAUTHENTICATED",
          message: `token ${token.slice(0, 20)}… expired; seen ${token.slice(-12)}`,
        },
      }),
    );
    const c = new CloudClient({ endpoint: "http://127.0.0.1:9", env: { CLOUDNATIVE_ACCESS_TOKEN: token }, fetch: f });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("token [redacted]… expired; seen [redacted]");
    expect(err.message).not.toContain(token.slice(5, 20));
    expect(err.message).not.toContain(token.slice(-12));
  });

  it("nor its details (ErrorInfo metadata, debug info), which an SDK user may log", async () => {
    const token = "ya29.c.b0AXv0zTQ9kLmNpQrStUvWxYz0123456789abcdefGHIJ";
    const details = [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "ACCESS_TOKEN_EXPIRED",
        metadata: { token: token.slice(0, 24), method: "getIamPolicy" },
      },
      {
        "@type": "type.googleapis.com/google.rpc.DebugInfo",
        stackEntries: [`auth ${token}`],
        detail: "Authorization: Bearer " + token,
      },
    ];
    const f = fakeFetch(() =>
      json(401, { error: { code: 401, status: "UNAUTHENTICATED", message: "expired", details } }),
    );
    const c = new CloudClient({ endpoint: "http://127.0.0.1:9", env: { CLOUDNATIVE_ACCESS_TOKEN: token }, fetch: f });
    const err = (await c.getIamPolicy("restorePlan", RP).catch((e: unknown) => e)) as { details: unknown[] };
    const text = JSON.stringify(err.details);
    expect(text).not.toContain(token.slice(5, 24));
    expect(text).not.toContain(token.slice(-12));
    expect(err.details[0]).toMatchObject({
      reason: "ACCESS_TOKEN_EXPIRED",
      metadata: { token: "[redacted]", method: "getIamPolicy" },
    });
  });

  it("user:password in the endpoint is never sent, nor in the endpoint's description", async () => {
    const f = fakeFetch(() => json(200, {}));
    const c = new CloudClient({ endpoint: "http://u:hunter22@127.0.0.1:9", env: {}, fetch: f });
    await c.getIamPolicy("restorePlan", RP);
    expect(f.calls[0]!.url).toBe(`http://127.0.0.1:9/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`);
    expect(f.calls[0]!.headers.authorization).toBeUndefined();
    expect(c.endpoint.describe).not.toContain("hunter22");
  });
});

describe("CLOUDNATIVE_EMULATOR_HOST", () => {
  const resolve = (value: string) => resolveEndpoint({ env: { CLOUDNATIVE_EMULATOR_HOST: value } });

  it.each([
    ["127.0.0.1:8085", "http://127.0.0.1:8085"],
    ["localhost:8085", "http://localhost:8085"],
    ["[::1]:8085", "http://[::1]:8085"],
    ["http://127.0.0.1:8085/prefix/", "http://127.0.0.1:8085/prefix"],
    ["https://emu.corp:443", "https://emu.corp"],
    ["http://u:pw@127.0.0.1:8085", "http://127.0.0.1:8085"],
  ])("%s is accepted", (value, base) => {
    expect(resolve(value).baseUrl("gkebackup")).toBe(base);
  });

  it.each([
    [":::", /is not host:port \(e\.g\. 127\.0\.0\.1:8085\)$/],
    ["host:notaport", /is not host:port/],
    ["http://x", /the port is missing/],
    ["emulator", /the port is missing/],
    [":8085", /is not host:port/],
    ["127.0.0.1:0", /is not host:port/],
    ["127.0.0.1:99999", /is not host:port/],
    ["ftp://127.0.0.1:21", /the scheme must be http or https/],
    ["127.0.0.1:8085?x=1", /must not have a query or fragment/],
  ])("%j is an EndpointError naming the variable", (value, message) => {
    let err: unknown;
    try {
      resolve(value);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EndpointError);
    expect((err as Error).message).toMatch(/^CLOUDNATIVE_EMULATOR_HOST "/);
    expect((err as Error).message).toMatch(message);
  });

  it("a malformed value with credentials does not show them", () => {
    expect(() => resolve("http://u:hunter22@:99999")).toThrow(
      /^CLOUDNATIVE_EMULATOR_HOST "http:\/\/:99999" is not host:port/,
    );
  });

  it("withoutCredentials drops the userinfo of an endpoint, with or without a scheme", () => {
    expect(withoutCredentials("http://u:p@127.0.0.1:9/x")).toBe("http://127.0.0.1:9/x");
    expect(withoutCredentials("u:p@127.0.0.1:9")).toBe("127.0.0.1:9");
    expect(withoutCredentials("google")).toBe("google");
    expect(withoutCredentials("http://127.0.0.1:9/a@b")).toBe("http://127.0.0.1:9/a@b");
  });
});
