// Issue 12: a web page must not drive the emulator. A browser reaching it by DNS rebinding sends
// its own host name in `Host`; a cross-origin fetch or form post sends an `Origin`. Both are
// refused with 403 (JSON envelope), on the admin API and the services alike, before anything is
// read, counted or changed. Requests as converge, the Google client libraries and curl send them
// (Host = the address it listens on, or a loopback name with its port; no Origin) are served.
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { jsonOrUndefined } from "../support/emulator.js";
import { RP, seedWorld } from "./helpers.js";

interface Raw {
  status: number;
  json: { error?: { status?: string; message?: string } } | undefined;
}

/** One request with exactly the headers given (fetch would not let us forge Host). */
function raw(
  emu: RunningEmulator,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: emu.port,
        method,
        path,
        headers: { ...headers, ...(body ? { "Content-Length": Buffer.byteLength(body) } : {}) },
        setHost: false,
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: jsonOrUndefined(text) as Raw["json"] }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

let emu: RunningEmulator;
let proxied: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ seed: seedWorld() });
  proxied = await startEmulator({ seed: seedWorld(), allowedHosts: ["iam.converge-test.invalid"] });
});
afterAll(async () => {
  await emu?.close();
  await proxied?.close();
});

const GET_POLICY = `/v1/${RP}:getIamPolicy?options.requestedPolicyVersion=3`;
const ADMIN = { Authorization: "Bearer admin-token" };

async function requestCount(): Promise<number> {
  const s = await raw(emu, "GET", "/__emulator/stats", { Host: emu.hostPort });
  return Object.values((s.json as unknown as { requests: Record<string, number> }).requests).reduce((a, b) => a + b, 0);
}

describe("Host header", () => {
  it.each(["127.0.0.1", "localhost", "[::1]"])("%s with the emulator's port is served", async (name) => {
    const port = emu.port;
    const r = await raw(emu, "GET", GET_POLICY, { Host: `${name}:${port}`, ...ADMIN });
    expect(r.status).toBe(200);
  });

  it.each([
    ["a rebinding name", (p: number) => `attacker.example:${p}`],
    ["a loopback name on another port", (p: number) => `localhost:${p + 1}`],
    ["a loopback address without the port", () => "127.0.0.1"],
    ["an empty Host", () => ""],
    ["a name that only starts like localhost", (p: number) => `localhost.attacker.example:${p}`],
  ])("%s is refused with 403, before the request is counted", async (_what, host) => {
    const before = await requestCount();
    for (const [method, path, body] of [
      ["GET", GET_POLICY, undefined],
      ["POST", "/__emulator/reset", undefined],
      ["POST", "/__emulator/faults", JSON.stringify({ errorRates: { UNAVAILABLE: 1 } })],
      ["GET", "/__emulator/world", undefined],
    ] as const) {
      const r = await raw(emu, method, path, { Host: host(emu.port), ...ADMIN }, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json?.error?.status).toBe("PERMISSION_DENIED");
      expect(r.json?.error?.message).toMatch(/Host/);
    }
    expect(await requestCount()).toBe(before);
    // The faults were not set: the service still answers.
    expect((await raw(emu, "GET", GET_POLICY, { Host: emu.hostPort, ...ADMIN })).status).toBe(200);
  });

  it("a request without any Host header is refused (HTTP/1.1 requires one: Node answers 400)", async () => {
    const r = await raw(emu, "GET", "/__emulator/world", {});
    expect([400, 403]).toContain(r.status);
  });

  it(
    "a refused request's connection is closed after the 403: what " + "follows is not parsed into another answer",
    async () => {
      const text = await new Promise<string>((resolve) => {
        const s = connect(emu.port, "127.0.0.1", () =>
          s.write(
            `POST /__emulator/reset HTTP/1.1\r\nHost: attacker.example:${emu.port}\r\nTransfer-Encoding: ` +
              `chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\nGET /__emulator/world HTTP/1.1\r\nHost: ${emu.hostPort}` +
              `\r\n\r\n`,
          ),
        );
        let out = "";
        s.setEncoding("utf8").on("data", (d: string) => (out += d));
        s.on("close", () => resolve(out));
        s.on("error", () => resolve(out));
      });
      expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 403"]);
      expect(text).toMatch(/Connection: close/i);
    },
  );

  it("names given with allowedHosts (a reverse proxy or TLS front) are served, on any port", async () => {
    expect((await raw(proxied, "GET", GET_POLICY, { Host: "iam.converge-test.invalid", ...ADMIN })).status).toBe(200);
    expect((await raw(proxied, "GET", GET_POLICY, { Host: "iam.converge-test.invalid:8443", ...ADMIN })).status).toBe(
      200,
    );
    expect((await raw(proxied, "GET", GET_POLICY, { Host: "other.converge-test.invalid", ...ADMIN })).status).toBe(403);
  });
});

describe("Origin header", () => {
  it.each([["http://attacker.example"], ["null"], ["http://localhost:1"], ["https://127.0.0.1"]])(
    "a cross-origin request (Origin %s) is refused with 403",
    async (origin) => {
      for (const [method, path] of [
        ["POST", "/__emulator/reset"],
        ["GET", "/__emulator/world"],
        ["GET", GET_POLICY],
      ] as const) {
        const r = await raw(emu, method, path, { Host: emu.hostPort, Origin: origin, ...ADMIN });
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.json?.error?.message).toMatch(/Origin/);
      }
    },
  );

  it("the emulator's own origin is served", async () => {
    const r = await raw(emu, "GET", "/__emulator/world", { Host: emu.hostPort, Origin: `http://${emu.hostPort}` });
    expect(r.status).toBe(200);
  });

  it("Node's fetch (as the tests and tools use it) is served", async () => {
    const r = await fetch(`${emu.url}/__emulator/stats`);
    expect(r.status).toBe(200);
    const local = await fetch(`http://localhost:${emu.port}/__emulator/stats`);
    expect(local.status).toBe(200);
  });
});

/** Sends `requests` one after the other on one connection, each once the previous answer is in;
 *  resolves with the status lines received when the connection closes (or all are answered). */
function oneConnection(emu: RunningEmulator, requests: string[]): Promise<string[]> {
  return new Promise((resolve) => {
    const statuses: string[] = [];
    let out = "";
    const s = connect(emu.port, "127.0.0.1", () => s.write(requests.shift()!));
    s.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      // Every answer here is JSON with a Content-Length: one ends with its closing brace.
      const done = out.match(/HTTP\/1\.1 \d{3}[\s\S]*?\r\n\r\n\{[\s\S]*\}\s*$/);
      if (!done) return;
      statuses.push(/HTTP\/1\.1 \d{3}/.exec(out)![0]);
      out = "";
      if (requests.length) s.write(requests.shift()!);
      else s.end();
    });
    s.on("close", () => resolve(statuses));
    s.on("error", () => resolve(statuses));
  });
}

describe("one keep-alive connection", () => {
  it(
    "a connection served once is still checked on each request: a " + "later foreign Host or Origin is refused",
    async () => {
      const get = (host: string, extra = "") =>
        `GET ${GET_POLICY} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer admin-token\r\n${extra}\r\n`;
      expect(
        await oneConnection(emu, [
          get(emu.hostPort),
          get(emu.hostPort),
          get(emu.hostPort, "Origin: http://attacker.example\r\n"),
        ]),
      ).toEqual(["HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 403"]);
      expect(await oneConnection(emu, [get(emu.hostPort), get(`attacker.example:${emu.port}`)])).toEqual([
        "HTTP/1.1 200",
        "HTTP/1.1 403",
      ]);
      expect(
        await oneConnection(emu, [get(emu.hostPort, `Origin: http://${emu.hostPort}\r\n`), get(emu.hostPort)]),
      ).toEqual(["HTTP/1.1 200", "HTTP/1.1 200"]);
    },
  );
});
