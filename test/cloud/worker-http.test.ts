// The HTTP worker's own rules (src/cloud/worker-http.ts): when requests leave the calling thread,
// what becomes of them when the worker is missing or dies, and errors crossing threads whole.
// test/cloud/http.test.ts runs every real-socket case through the worker as well.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { errorFromWire, errorToWire } from "../../src/cloud/http-wire.js";
import { networkCode, networkMessage } from "../../src/cloud/network-errors.js";
import { createWorkerHttp, type WorkerHttp } from "../../src/cloud/worker-http.js";

const TS_WORKER = new URL("../support/ts-http-worker.mjs", import.meta.url);
/** A worker that says it is ready, then dies on its first request. */
const CRASHING_WORKER = new URL("../support/crashing-http-worker.mjs", import.meta.url);

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function echoServer(delayMs = 0): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url!);
    res.setHeader("Content-Type", "application/json");
    setTimeout(() => res.end(JSON.stringify({ path: req.url })), delayMs);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

function made(http: WorkerHttp): WorkerHttp {
  closers.push(() => http.close());
  return http;
}

const get = (http: WorkerHttp, url: string) =>
  http(url, { method: "GET", headers: { Accept: "application/json" }, signal: new AbortController().signal });

describe("createWorkerHttp", () => {
  it(
    "sends the first requests directly, starts the worker after " + "`directFirst` of them, then sends through it",
    async () => {
      const { url, paths } = await echoServer();
      const http = made(createWorkerHttp({ env: {}, directFirst: 3, workerUrl: TS_WORKER }));
      for (let i = 0; i < 3; i++)
        expect(JSON.parse(await (await get(http, `${url}/a${i}`)).text())).toEqual({ path: `/a${i}` });
      // Not started yet: nothing to wait for.
      expect(await http.ready()).toBe(false);
      await get(http, `${url}/b`); // the fourth starts it, and is still sent directly
      expect(await http.ready()).toBe(true);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          get(http, `${url}/c${i}`).then(async (r) => [
            r.status,
            JSON.parse(await r.text()),
            r.headers.get("CONTENT-TYPE"),
          ]),
        ),
      );
      expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => [200, { path: `/c${i}` }, "application/json"]));
      expect(http.counts()).toEqual({ direct: 4, worker: 20 });
      expect(paths).toHaveLength(24);
    },
  );

  it(
    "told to expect `directFirst` requests or more, starts the worker " +
      "before the first; fewer, sends them directly",
    async () => {
      const { url, paths } = await echoServer();
      const few = made(createWorkerHttp({ env: {}, directFirst: 3, workerUrl: TS_WORKER }));
      few.expect(2);
      expect(await few.ready()).toBe(false);
      const many = made(createWorkerHttp({ env: {}, directFirst: 3, workerUrl: TS_WORKER }));
      many.expect(3);
      expect(await many.ready()).toBe(true);
      await Promise.all([get(few, `${url}/f0`), get(few, `${url}/f1`), get(many, `${url}/m0`), get(many, `${url}/m1`)]);
      expect(few.counts()).toEqual({ direct: 2, worker: 0 });
      expect(many.counts()).toEqual({ direct: 0, worker: 2 });
      expect(paths.sort()).toEqual(["/f0", "/f1", "/m0", "/m1"]);
    },
  );

  it("without the worker's module every request is sent directly", async () => {
    const { url } = await echoServer();
    const http = made(
      createWorkerHttp({ env: {}, directFirst: 0, workerUrl: new URL("./no-such-worker.mjs", import.meta.url) }),
    );
    expect(await http.ready()).toBe(false);
    for (let i = 0; i < 3; i++) expect((await get(http, `${url}/x`)).status).toBe(200);
    expect(http.counts()).toEqual({ direct: 3, worker: 0 });
  });

  it(
    "when the worker dies, what waited for it fails as an unknown outcome (no " +
      "code: not retried) and later requests are sent directly",
    async () => {
      const { url } = await echoServer();
      const http = made(createWorkerHttp({ env: {}, directFirst: 0, workerUrl: CRASHING_WORKER }));
      expect(await http.ready()).toBe(true);
      const lost = (await get(http, `${url}/lost`).catch((e: unknown) => e)) as Error;
      expect(lost.message).toMatch(/^the HTTP worker stopped before answering: /);
      expect(networkCode(lost)).toBeUndefined();
      expect((await get(http, `${url}/after`)).status).toBe(200);
      expect(http.counts()).toEqual({ direct: 1, worker: 1 });
    },
  );

  it(
    "an idle worker does not keep the process alive, a busy one does " + "(the compiled worker, in a child process)",
    async () => {
      // The compiled modules (npm test builds them first), run by plain node: a TypeScript loader
      // keeps a process alive by itself, which would hide what is tested here.
      const { url } = await echoServer(300);
      const dist = new URL("../../dist/cloud/worker-http.js", import.meta.url).href;
      const script = (request: boolean) =>
        `
      import { createWorkerHttp } from ${JSON.stringify(dist)};
      const http = createWorkerHttp({ ` +
        `env: {}, directFirst: 0 });
      process.stdout.write(String(await http.ready()));
      // No await: ` +
        `only the request in the worker keeps the process alive until its answer.
      if (${request}) http(` +
        `${JSON.stringify(`${url}/late`)}, { method: "GET", headers: {}, signal: new AbortController().signal ` +
        `})
        .then((r) => process.stdout.write(" " + r.status + " " + JSON.stringify(http.counts())));
    `;
      expect(await runChild(script(false))).toEqual({ code: 0, out: "true" });
      expect(await runChild(script(true))).toEqual({ code: 0, out: 'true 200 {"direct":0,"worker":1}' });
    },
  );
});

async function runChild(script: string): Promise<{ code: number | null; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), "worker-http-"));
  closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "child.mjs"), script);
  const child = spawn(process.execPath, [join(dir, "child.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  // A process the worker kept alive would never exit: it is killed after 10 s (code null).
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  return { code, out };
}

describe("errors crossing to and from the worker", () => {
  it("keep their class, name, message, code and causes (what the transport reads of them)", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED", errno: -111 });
    const both = Object.assign(
      new AggregateError(
        [refused, Object.assign(new Error("connect ECONNREFUSED ::1:9"), { code: "ECONNREFUSED" })],
        "connect failed",
      ),
      { code: "ECONNREFUSED" },
    );
    const aborted = Object.assign(new Error("The operation was aborted", { cause: new Error("timeout") }), {
      name: "AbortError",
      code: "ABORT_ERR",
    });
    const cases: unknown[] = [
      refused,
      both,
      aborted,
      new TypeError('unsupported URL scheme "ftp:" in ftp://x/'),
      new RangeError("bad"),
      "a string",
      undefined,
    ];
    for (const e of cases) {
      const back = errorFromWire(structuredClone(errorToWire(e)));
      expect(networkCode(back)).toBe(networkCode(e));
      expect(networkMessage(back)).toBe(networkMessage(e));
      if (e instanceof Error) {
        expect(back.constructor).toBe(e.constructor);
        expect([back.name, back.message]).toEqual([e.name, e.message]);
      }
    }
    const back = errorFromWire(errorToWire(both)) as AggregateError;
    expect(back.errors.map((x: Error & { code?: string }) => [x.message, x.code])).toEqual([
      ["connect ECONNREFUSED 127.0.0.1:9", "ECONNREFUSED"],
      ["connect ECONNREFUSED ::1:9", "ECONNREFUSED"],
    ]);
    expect((errorFromWire(errorToWire(aborted)).cause as Error).message).toBe("timeout");
  });

  it("a cause chain is kept four deep and no deeper (a cycle ends)", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    let w = errorToWire(b);
    let depth = 0;
    while (w.cause) {
      w = w.cause;
      depth++;
    }
    expect(depth).toBe(4);
  });
});
