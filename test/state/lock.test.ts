import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localStateStore, newState, withLock, type LockInfo } from "../../src/state/index.js";
import { deadPid, mode, overwrite, tempDir, userError } from "./helpers.js";

function lockInfo(over: Partial<LockInfo>): LockInfo {
  return {
    id: "5b0c1f7e-0000-4000-8000-000000000001",
    holder: "someone@elsewhere",
    operation: "apply",
    time: "2024-05-01T12:00:00.000Z",
    pid: 4242,
    hostname: "elsewhere.example",
    version: "0.1.0",
    path: "state/dev.json",
    ...over,
  };
}

describe("state lock", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  let lockFile: string;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = join(dir, "state", "dev.json");
    lockFile = `${file}.lock`;
  });
  afterEach(() => cleanup());

  async function plantLock(info: LockInfo): Promise<void> {
    await mkdir(join(dir, "state"), { recursive: true });
    await writeFile(lockFile, JSON.stringify(info));
  }

  it("writes the lock info to {path}.lock with mode 0600 and removes it on release", async () => {
    const old = process.umask(0);
    try {
      const store = localStateStore(file);
      const lock = await store.lock("apply");
      expect(await mode(lockFile)).toBe(0o600);
      const onDisk = JSON.parse(readFileSync(lockFile, "utf8")) as LockInfo;
      expect(onDisk).toEqual(lock.info);
      expect(onDisk).toMatchObject({ operation: "apply", pid: process.pid, hostname: hostname(), path: file });
      expect(onDisk.holder).toMatch(new RegExp(`@${hostname().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
      expect(onDisk.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Date(onDisk.time).toISOString()).toBe(onDisk.time);
      expect(onDisk.version).toMatch(/^\d+\.\d+\.\d+/);
      await lock.release();
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      process.umask(old);
    }
  });

  it("a second writer fails at once, naming the holder, operation, pid, time and lock ID", async () => {
    const first = await localStateStore(file).lock("apply");
    const t0 = Date.now();
    const err = await userError(() => localStateStore(file).lock("import"));
    expect(Date.now() - t0).toBeLessThan(1000);
    const { summary, file: where } = err.diagnostics[0]!;
    const i = first.info;
    expect(summary).toBe(
      `state is locked by ${i.holder} (apply, pid ${process.pid}, since ${i.time}); lock ID ${i.id} ` +
        `— if that process is gone, run: converge force-unlock ${i.id}`,
    );
    expect(where).toBe(lockFile);
    // the first lock is untouched
    expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(i.id);
    await first.release();
  });

  it("with a timeout, waits and succeeds when the holder releases", async () => {
    const store = localStateStore(file);
    const first = await store.lock("apply");
    setTimeout(() => void first.release(), 400);
    const t0 = Date.now();
    const second = await store.lock("apply", { timeoutMs: 5000 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
    expect(second.info.id).not.toBe(first.info.id);
    expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(second.info.id);
    await second.release();
  });

  it('without a timeout, advises --lock-timeout (not "Waited 0.0s")', async () => {
    const first = await localStateStore(file).lock("apply");
    const err = await userError(() => localStateStore(file).lock("apply"));
    expect(err.diagnostics[0]!.detail).toContain("Use --lock-timeout to wait for it.");
    expect(err.diagnostics[0]!.detail).not.toContain("Waited");
    await first.release();
  });

  it("with a timeout, fails the same way when the holder keeps the lock", async () => {
    const first = await localStateStore(file).lock("apply");
    const t0 = Date.now();
    const err = await userError(() => localStateStore(file).lock("apply", { timeoutMs: 500 }));
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(480);
    expect(waited).toBeLessThan(2000);
    expect(err.diagnostics[0]!.summary).toContain(`lock ID ${first.info.id}`);
    expect(err.diagnostics[0]!.detail).toContain("Waited");
    await first.release();
  });

  it("takes over a lock whose holder process is dead on this host", async () => {
    const pid = await deadPid();
    await plantLock(lockInfo({ pid, hostname: hostname(), holder: `x@${hostname()}` }));
    const lock = await localStateStore(file).lock("apply");
    expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(lock.info.id);
    await lock.release();
    // no takeover markers are left behind
    expect(readdirSync(join(dir, "state"))).toEqual([]);
  });

  it("a lock from another host blocks, even if a process with that pid does not exist here", async () => {
    const pid = await deadPid();
    const info = lockInfo({ pid });
    await plantLock(info);
    const err = await userError(() => localStateStore(file).lock("apply"));
    expect(err.diagnostics[0]!.summary).toContain(
      `state is locked by someone@elsewhere (apply, pid ${pid}, since ${info.time}); lock ID ${info.id}`,
    );
    expect(err.diagnostics[0]!.detail).toContain("elsewhere.example");
    const err2 = await userError(() => localStateStore(file).lock("apply", { timeoutMs: 300 }));
    expect(err2.diagnostics[0]!.summary).toContain(info.id);
    expect(JSON.parse(readFileSync(lockFile, "utf8"))).toEqual(info);
  });

  it("a lock held by a live process on this host blocks", async () => {
    await plantLock(lockInfo({ pid: process.ppid, hostname: hostname() }));
    await expect(localStateStore(file).lock("apply")).rejects.toThrow(/state is locked by/);
  });

  // A PID is reused once its process is gone: the lock's PID alive on this host does not mean the
  // holder is. The lock records the holder's start time (Linux: /proc/PID/stat), the boot and the
  // PID namespace; converge once said "still running" of whatever process had the PID now.
  describe.runIf(process.platform === "linux")("a lock whose PID another process has now", () => {
    const procStart = (pid: number) =>
      readFileSync(`/proc/${pid}/stat`, "utf8")
        .slice(readFileSync(`/proc/${pid}/stat`, "utf8").lastIndexOf(")") + 2)
        .split(" ")[19]!;
    const boot = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const pidns = () => readlinkSync("/proc/self/ns/pid");

    it("records the holder's start time, boot and PID namespace", async () => {
      const lock = await localStateStore(file).lock("apply");
      const onDisk = JSON.parse(readFileSync(lockFile, "utf8")) as LockInfo;
      expect(onDisk.process).toEqual({ start: procStart(process.pid), boot: boot(), pidNamespace: pidns() });
      await lock.release();
    });

    it("is taken over when the process with that PID started at another time (same boot, same namespace)", async () => {
      const start = String(Number(procStart(process.ppid)) + 1);
      await plantLock(
        lockInfo({ pid: process.ppid, hostname: hostname(), process: { start, boot: boot(), pidNamespace: pidns() } }),
      );
      const lock = await localStateStore(file).lock("apply");
      expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(lock.info.id);
      await lock.release();
    });

    it("is taken over after a reboot (another boot ID)", async () => {
      await plantLock(
        lockInfo({
          pid: process.ppid,
          hostname: hostname(),
          process: {
            start: procStart(process.ppid),
            boot: "00000000-0000-4000-8000-000000000000",
            pidNamespace: pidns(),
          },
        }),
      );
      const lock = await localStateStore(file).lock("apply");
      await lock.release();
    });

    it(
      "blocks, saying the PID may be another process now, when converge cannot tell " +
        "(no start time recorded, or another PID namespace)",
      async () => {
        for (const process_ of [undefined, { start: "1", boot: boot(), pidNamespace: "pid:[1]" }]) {
          const info = lockInfo({
            pid: process.ppid,
            hostname: hostname(),
            ...(process_ ? { process: process_ } : {}),
          });
          await plantLock(info);
          const err = await userError(() => localStateStore(file).lock("apply"));
          const d = err.diagnostics[0]!;
          expect(d.summary).toContain(`converge force-unlock ${info.id}`);
          expect(d.detail).toContain(`held by process ${process.ppid}, which may be another process now`);
          expect(d.detail).not.toContain("still running");
          expect(JSON.parse(readFileSync(lockFile, "utf8"))).toEqual(info);
        }
      },
    );

    it("says 'still running' only of the holder itself (same PID, start time, boot and namespace)", async () => {
      const first = await localStateStore(file).lock("apply");
      const err = await userError(() => localStateStore(file).lock("import"));
      expect(err.diagnostics[0]!.detail).toContain(`The holder process ${process.pid} is still running on this host`);
      await first.release();
    });
  });

  it("two takeovers of the same stale lock never both win (in-process race)", async () => {
    for (let round = 0; round < 20; round++) {
      const pid = await deadPid();
      await plantLock(lockInfo({ id: `stale-${round}`, pid, hostname: hostname() }));
      const stores = Array.from({ length: 8 }, () => localStateStore(file));
      const results = await Promise.allSettled(stores.map((s) => s.lock("apply")));
      const won = results.filter((r) => r.status === "fulfilled");
      expect(won).toHaveLength(1);
      const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<(typeof stores)[0]["lock"]>>>).value;
      expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(winner.info.id);
      for (const r of results) {
        if (r.status === "rejected") expect(String(r.reason)).toContain(`lock ID ${winner.info.id}`);
      }
      await winner.release();
    }
  });

  it("takes over an unreadable lock file that stays unreadable (left by a writer killed mid-create)", async () => {
    await mkdir(join(dir, "state"));
    await writeFile(lockFile, "");
    const t0 = Date.now();
    const lock = await localStateStore(file).lock("apply");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(lock.info.id);
    await lock.release();
    expect(readdirSync(join(dir, "state"))).toEqual([]);
  }, 10_000);

  it("waits for an empty lock file to be filled in, then honours it", async () => {
    await mkdir(join(dir, "state"));
    await writeFile(lockFile, "");
    const info = lockInfo({ pid: process.ppid, hostname: hostname() });
    setTimeout(() => void writeFile(lockFile, JSON.stringify(info)), 300);
    const err = await userError(() => localStateStore(file).lock("apply"));
    expect(err.diagnostics[0]!.summary).toContain(`lock ID ${info.id}`);
    expect(JSON.parse(readFileSync(lockFile, "utf8"))).toEqual(info);
  });

  it("an abandoned takeover marker does not block the takeover", async () => {
    const pid = await deadPid();
    const info = lockInfo({ pid, hostname: hostname() });
    await plantLock(info);
    const marker = `${lockFile}.takeover-${createHash("sha256").update(`id:${info.id}`).digest("hex").slice(0, 16)}`;
    await writeFile(marker, "{}");
    const old = new Date(Date.now() - 60_000);
    await utimes(marker, old, old);
    const lock = await localStateStore(file).lock("apply");
    expect(readdirSync(join(dir, "state"))).toEqual(["dev.json.lock"]);
    await lock.release();
  });

  it("forceUnlock removes the lock only with the right id", async () => {
    const store = localStateStore(file);
    const info = lockInfo({});
    await plantLock(info);
    const wrong = await userError(() => store.forceUnlock("not-the-id"));
    expect(wrong.diagnostics[0]!.summary).toContain(info.id);
    expect(wrong.diagnostics[0]!.summary).toContain("not-the-id");
    expect(existsSync(lockFile)).toBe(true);
    await store.forceUnlock(info.id);
    expect(existsSync(lockFile)).toBe(false);
    const none = await userError(() => store.forceUnlock(info.id));
    expect(none.diagnostics[0]!.summary).toContain("no lock");
    // and then the state can be locked again
    await (await store.lock("apply")).release();
  });

  it("release is idempotent and never removes someone else's lock", async () => {
    const store = localStateStore(file);
    const a = await store.lock("apply");
    await a.release();
    await a.release();
    await Promise.all([a.release(), a.release()]);
    const b = await store.lock("apply");
    await a.release(); // a's lock is long gone; b's must survive
    expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(b.info.id);
    // a lock force-unlocked and re-taken by someone else is not removed by its old owner
    await store.forceUnlock(b.info.id);
    const c = await store.lock("apply");
    await b.release();
    expect(JSON.parse(readFileSync(lockFile, "utf8")).id).toBe(c.info.id);
    await c.release();
    await Promise.all([c.release(), c.release()]);
    expect(existsSync(lockFile)).toBe(false);
  });

  it("withLock releases after success and after a throw", async () => {
    const store = localStateStore(file);
    const value = await withLock(store, "apply", undefined, async (lock) => {
      expect(existsSync(lockFile)).toBe(true);
      expect(lock.holder.operation).toBe("apply");
      return overwrite(store, newState("dev"));
    });
    expect(value.serial).toBe(1);
    expect(existsSync(lockFile)).toBe(false);
    await expect(
      withLock(store, "import", { timeoutMs: 0 }, () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(existsSync(lockFile)).toBe(false);
  });
});
