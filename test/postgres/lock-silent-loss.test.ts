// The state lock's connection lost without a word (a NAT or firewall that drops an idle flow, a
// partition): the server ended the session, so the lock is gone and another converge took it,
// but this converge's lock connection saw no error. Its next state write must be refused, not
// land while the other holds the lock. A TCP proxy in front of the real PostgreSQL blackholes
// the lock's connection: nothing more passes either way, and it is never closed.
import { createServer, type Server, type Socket, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newState, versionOf } from "../../src/state/index.js";
import { postgresStateStore } from "../../src/state/postgres/store.js";
import { useFreshDatabase } from "./helpers.js";
import { writeIntent } from "../state/helpers.js";

const fresh = useFreshDatabase("lock_silent");

/** A proxy to the server; `blackhole(n)` stops the n-th connection (1-based) dead, silently. */
interface Proxy {
  port: number;
  blackhole(n: number): void;
  /** How many connections it has taken. */
  count(): number;
  close(): Promise<void>;
}

function startProxy(target: { host: string; port: number }): Promise<Proxy & { server: Server }> {
  const conns: Array<{ client: Socket; upstream: Socket; dead: boolean }> = [];
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const c = { client, upstream, dead: false };
    conns.push(c);
    client.on("data", (d) => void (c.dead || upstream.write(d)));
    upstream.on("data", (d) => void (c.dead || client.write(d)));
    // A blackholed connection is never closed: neither side hears of the other's end.
    client.on("close", () => void (c.dead || upstream.destroy()));
    upstream.on("close", () => void (c.dead || client.destroy()));
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        server,
        port: (server.address() as { port: number }).port,
        blackhole: (n) => void (conns[n - 1]!.dead = true),
        count: () => conns.length,
        close: async () => {
          for (const c of conns) {
            c.client.destroy();
            c.upstream.destroy();
          }
          await new Promise<void>((r) => server.close(() => r()));
        },
      }),
    ),
  );
}

let proxy: Proxy;
beforeAll(async () => {
  const u = new URL(fresh.db.url);
  proxy = await startProxy({ host: u.hostname, port: Number(u.port) });
});
afterAll(async () => {
  await proxy?.close();
});

describe("a state lock lost without a word", { timeout: 45_000 }, () => {
  it("the next write is refused (state/lock-lost) while another converge holds the lock; that one writes", async () => {
    const viaProxy = new URL(fresh.db.url);
    viaProxy.port = String(proxy.port);
    const a = postgresStateStore({ stack: "silent", schema: "silent", env: { DATABASE_URL: viaProxy.href } });
    const b = postgresStateStore({ stack: "silent", schema: "silent", env: fresh.db.env });
    try {
      const v1 = await a.write(newState("silent"), undefined); // connection 1: the pool's
      const lock = await a.lock("apply"); // connection 2: the lock's
      proxy.blackhole(2);
      const pid = (await fresh.db.admin.query("SELECT backend_pid FROM silent.locks WHERE stack = 'silent'")).rows[0]
        .backend_pid as number;
      // The server ends that session (its keepalive gave up on it): the lock goes with it.
      await fresh.db.admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await expect
        .poll(async () => (await fresh.db.admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).rowCount)
        .toBe(0);
      expect(lock.lost()).toBeUndefined(); // converge heard nothing
      const other = await b.lock("apply");
      const write = a.write({ ...v1, outputs: { from: "a" } }, versionOf(v1));
      await expect(write).rejects.toMatchObject({
        diagnostics: [expect.objectContaining({ code: "state/lock-lost" })],
      });
      // Nor may a cloud write start: its intent is refused the same way, and nothing is recorded.
      await expect(a.recordIntents([writeIntent("from-a")])).rejects.toMatchObject({
        diagnostics: [expect.objectContaining({ code: "state/lock-lost" })],
      });
      expect(await b.pendingIntents()).toEqual([]);
      expect((await b.read())!.serial).toBe(v1.serial);
      await b.write({ ...v1, outputs: { from: "b" } }, versionOf(v1));
      await other.release();
      // Releasing the silent lock ends; it does not wait on that connection for ever.
      const started = Date.now();
      await lock.release();
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await b.close();
      await a.close().catch(() => undefined);
    }
  });
});

describe("the state's connection lost without a word", { timeout: 90_000 }, () => {
  it(
    "a read gives up after the query timeout with a state/postgres error, and " +
      "closing the store does not wait on that connection for ever",
    async () => {
      const viaProxy = new URL(fresh.db.url);
      viaProxy.port = String(proxy.port);
      const a = postgresStateStore({
        stack: "silent2",
        schema: "silent",
        env: { DATABASE_URL: viaProxy.href },
        queryTimeoutMs: 2_000,
      });
      const before = proxy.count();
      await a.write(newState("silent2"), undefined);
      expect(proxy.count()).toBe(before + 1); // one connection: the pool's
      proxy.blackhole(before + 1);
      const started = Date.now();
      await expect(a.read()).rejects.toMatchObject({
        diagnostics: [
          expect.objectContaining({
            code: "state/postgres",
            summary: expect.stringMatching(/cannot read the state in PostgreSQL .*timeout/i),
          }),
        ],
      });
      expect(Date.now() - started).toBeLessThan(10_000);
      const closing = Date.now();
      await a.close();
      expect(Date.now() - closing).toBeLessThan(10_000);
    },
  );

  it(
    "a write on it gives up after one query timeout (no ROLLBACK waits on the dead " +
      "connection), and the next command's query gets a new connection",
    async () => {
      const viaProxy = new URL(fresh.db.url);
      viaProxy.port = String(proxy.port);
      // One timeout (10 s) against two (20 s, a ROLLBACK waiting too): far enough apart that a loaded
      // machine's delays cannot blur them (it was 4 s against 8 s, with a 7 s bound).
      const a = postgresStateStore({
        stack: "silent3",
        schema: "silent",
        env: { DATABASE_URL: viaProxy.href },
        queryTimeoutMs: 10_000,
      });
      try {
        const before = proxy.count();
        const v1 = await a.write(newState("silent3"), undefined);
        proxy.blackhole(before + 1);
        const started = Date.now();
        await expect(a.write({ ...v1, outputs: { x: 1 } }, versionOf(v1))).rejects.toMatchObject({
          diagnostics: [expect.objectContaining({ code: "state/postgres" })],
        });
        expect(Date.now() - started).toBeLessThan(17_000);
        // The dead connection left the pool: this read is answered on a new one.
        expect((await a.read())!.serial).toBe(v1.serial);
        expect(proxy.count()).toBe(before + 2);
      } finally {
        await a.close();
      }
    },
  );
});
