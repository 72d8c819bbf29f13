// Concurrency (issue 8, item 2): two applies on one state — one proceeds, the other fails at once
// naming the lock holder; `converge force-unlock LOCK_ID` clears a lock left by a killed process
// (and one taken on another host); a foreign writer editing the same policies during apply,
// replace and destroy loses nothing.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import {
  addMember,
  ALL_OBJECTS,
  BASE_SEED,
  divergence,
  expectExit,
  foreignEdit,
  hasGrant,
  liveWorld,
  lostForeign,
  prng,
  recordFigures,
  responses,
  runCli,
  seedWorld,
  setFaults,
  size,
  sleep,
  startCli,
  startWorld,
  stats,
  totalRequests,
  useStackDir,
  type Grant,
  type Variant,
} from "./helpers.js";

const FOREIGN_ROUNDS = size(1, 10);

const figures = {
  lockContentions: 0,
  refusedAtOnce: 0,
  waitedForLock: 0,
  forceUnlocks: 0,
  foreignWriterRounds: 0,
  foreignWrites: 0,
  foreignWriterConflicts: 0,
  convergeAbortedWrites: 0,
  lostForeignGrants: 0,
};
afterAll(
  () =>
    (figures.lockContentions || figures.foreignWriterRounds) &&
    recordFigures("concurrency", { ...figures, losses: figures.lostForeignGrants }),
);

const ws = useStackDir();
let emu: RunningEmulator;
const lockFile = () => join(ws.dir, "state", "rel.json.lock");

beforeEach(async () => {
  emu = await startWorld(seedWorld());
});
afterEach(async () => {
  await emu.close();
});

/** The lock record, or undefined while the file is missing or still being written. */
function readLockFile(): { id: string; pid: number; holder: string; operation: string } | undefined {
  try {
    return JSON.parse(readFileSync(lockFile(), "utf8")) as {
      id: string;
      pid: number;
      holder: string;
      operation: string;
    };
  } catch {
    return undefined;
  }
}

async function waitFor(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("two applies on one state", () => {
  it("the second fails at once naming the holder, sends nothing to the cloud; the first converges", async () => {
    ws.writeStack("base");
    await setFaults(emu, { latencyMs: 300, seed: 1 }); // the first apply takes a while
    const first = startCli(["apply", "--auto-approve", "-f", "stack.yaml", "--parallelism", "4"], {
      cwd: ws.dir,
      emulator: emu,
    });
    // The lock file exists a moment before its content is written: wait for the whole record.
    await waitFor(() => readLockFile() !== undefined, "the first apply's lock");
    const lock = readLockFile()!;
    expect(lock.pid).toBe(first.child.pid);

    // The second apply talks to its own (empty-stats) emulator: it must not even read.
    const other = await startWorld(seedWorld());
    try {
      const second = await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: ws.dir, emulator: other });
      figures.lockContentions++;
      expectExit(second, 1, "second apply");
      expect(second.stderr).toContain("state is locked by");
      expect(second.stderr).toContain(`${userInfo().username}@${hostname()}`);
      expect(second.stderr).toContain(`pid ${first.child.pid}`);
      expect(second.stderr).toContain("apply");
      expect(second.stderr).toContain(`lock ID ${lock.id}`);
      expect(second.stderr).toContain(`converge force-unlock ${lock.id}`);
      expect(second.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(totalRequests(await stats(other))).toBe(0);
      // "At once": it did not wait for the first apply to finish.
      expect(first.child.exitCode).toBeNull();
      figures.refusedAtOnce++;
    } finally {
      await other.close();
    }
    const r = await first.done;
    expectExit(r, 0, "first apply");
    expect(existsSync(lockFile())).toBe(false);
    expect(divergence(await liveWorld(emu), "base")).toEqual([]);
  }, 180_000);

  it("with --lock-timeout the second waits for the first and then finds nothing to do", async () => {
    ws.writeStack("base");
    await setFaults(emu, { latencyMs: 60, seed: 2 });
    const first = startCli(["apply", "--auto-approve", "-f", "stack.yaml", "--parallelism", "4"], {
      cwd: ws.dir,
      emulator: emu,
    });
    await waitFor(() => existsSync(lockFile()), "the first apply's lock");
    const second = await runCli(["apply", "--auto-approve", "-f", "stack.yaml", "--lock-timeout", "120s"], {
      cwd: ws.dir,
      emulator: emu,
    });
    figures.lockContentions++;
    figures.waitedForLock++;
    expectExit(await first.done, 0, "first apply");
    expectExit(second, 0, "second apply (waited)");
    expect(second.stdout).toMatch(/No changes/);
  }, 240_000);
});

describe("force-unlock", () => {
  it("clears the lock a SIGKILLed apply left, then apply converges", async () => {
    ws.writeStack("base");
    await setFaults(emu, { latencyMs: 100, seed: 3 });
    const run = startCli(["apply", "--auto-approve", "--json", "-f", "stack.yaml"], {
      cwd: ws.dir,
      emulator: emu,
      onLine: (_l, i) => i === 600 && run.child.kill("SIGKILL"),
    });
    const r = await run.done;
    expect(r.signal).toBe("SIGKILL");
    const lock = JSON.parse(readFileSync(lockFile(), "utf8")) as { id: string; pid: number };
    expect(lock.pid).toBe(run.child.pid);

    const wrong = await runCli(["force-unlock", "not-the-id", "-f", "stack.yaml"], { cwd: ws.dir });
    expectExit(wrong, 1, "force-unlock with a wrong ID");
    expect(wrong.stderr).toContain(lock.id);
    expect(existsSync(lockFile())).toBe(true);

    const ok = await runCli(["force-unlock", lock.id, "-f", "stack.yaml"], { cwd: ws.dir });
    expectExit(ok, 0, "force-unlock");
    figures.forceUnlocks++;
    expect(ok.stdout).toContain(lock.id);
    expect(existsSync(lockFile())).toBe(false);

    const none = await runCli(["force-unlock", lock.id, "-f", "stack.yaml"], { cwd: ws.dir });
    expectExit(none, 1, "force-unlock with no lock");
    expect(none.stderr).toMatch(/not locked/);

    await setFaults(emu, { latencyMs: 0, seed: 4 });
    expectExit(
      await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: ws.dir, emulator: emu }),
      0,
      "apply after force-unlock",
    );
    expectExit(
      await runCli(["plan", "--detailed-exitcode", "-f", "stack.yaml"], { cwd: ws.dir, emulator: emu }),
      0,
      "plan",
    );
    expect(lostForeign(await liveWorld(emu))).toEqual([]);
  }, 180_000);

  it("a lock taken on another host blocks (it cannot be checked) until force-unlock", async () => {
    ws.writeStack("base");
    const id = "9b2f4c1e-0000-4000-8000-000000000001";
    const info = {
      id,
      holder: "ci@build-agent-7",
      operation: "apply",
      time: new Date().toISOString(),
      pid: 4242,
      hostname: "build-agent-7",
      version: "0.1.0",
      path: join(ws.dir, "state", "rel.json"),
    };
    writeFileSync(lockFile(), JSON.stringify(info), { mode: 0o600 });
    const blocked = await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: ws.dir, emulator: emu });
    expectExit(blocked, 1, "apply against another host's lock");
    expect(blocked.stderr).toContain("ci@build-agent-7");
    expect(blocked.stderr).toContain(`converge force-unlock ${id}`);
    expect(totalRequests(await stats(emu))).toBe(0);
    expectExit(await runCli(["force-unlock", id, "-f", "stack.yaml"], { cwd: ws.dir }), 0, "force-unlock");
    figures.forceUnlocks++;
    expectExit(
      await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: ws.dir, emulator: emu }),
      0,
      "apply after force-unlock",
    );
  }, 120_000);
});

describe("a lock file left empty (a process killed between creating and filling it)", () => {
  it("does not block the next apply for long", async () => {
    ws.writeStack("base");
    writeFileSync(lockFile(), "", { mode: 0o600 });
    const t0 = Date.now();
    const r = await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: ws.dir, emulator: emu });
    expectExit(r, 0, "apply over an empty lock file");
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(existsSync(lockFile())).toBe(false);
    expect(divergence(await liveWorld(emu), "base")).toEqual([]);
  }, 120_000);
});

describe(`a foreign writer during apply, replace and destroy (${FOREIGN_ROUNDS} round(s))`, () => {
  for (let round = 0; round < FOREIGN_ROUNDS; round++) {
    it(`round ${round}: every foreign grant written during the commands survives`, async () => {
      const rng = prng(BASE_SEED * 31 + round);
      const written: Grant[] = [];
      let n = 0;
      let writerConflicts = 0;
      // The writer: read-modify-write with etags (as gcloud does), as fast as it can, on the very
      // policies converge is writing; on endpoints often into the roles converge's member
      // resources add to, on restore plans into new roles and the foreign conditional binding.
      const writer = (stop: () => boolean) =>
        (async () => {
          while (!stop()) {
            const object = rng.pick(ALL_OBJECTS);
            const k = n++;
            // One write in five adds a conditional binding, which makes the policy version 3.
            const condition = rng.chance(0.2)
              ? { title: `writer-${k % 3}`, expression: 'request.time < timestamp("2031-01-01T00:00:00Z")' }
              : undefined;
            const grant: Grant = condition
              ? {
                  object,
                  role: `roles/writer.cond${k % 2}`,
                  condition: condition.title,
                  member: `user:writer-${round}-${k}@example.com`,
                }
              : object.includes("/endpoints/")
                ? rng.chance(0.6)
                  ? { object, role: `roles/rel.invoker${k % 2}`, member: `user:writer-${round}-${k}@example.com` }
                  : { object, role: `roles/writer.r${k % 5}`, member: `user:writer-${round}-${k}@example.com` }
                : { object, role: `roles/writer.r${k % 5}`, member: `group:writer-${round}-${k}@example.com` };
            const { attempts } = await foreignEdit(emu, object, (p) =>
              addMember(p, grant.role, grant.member, condition),
            );
            writerConflicts += attempts - 1;
            written.push(grant);
            await sleep(rng.int(0, 15));
          }
        })();

      const steps: { variant: Variant; cmd: "apply" | "destroy"; target: Variant | "destroyed" }[] = [
        { variant: "base", cmd: "apply", target: "base" },
        { variant: "changed", cmd: "apply", target: "changed" },
        { variant: "changed", cmd: "destroy", target: "destroyed" },
      ];
      for (const s of steps) {
        ws.writeStack(s.variant);
        await setFaults(emu, { latencyMs: rng.int(5, 20), latencyJitterMs: 30, seed: rng.int(1, 1e6) });
        let done = false;
        const w = writer(() => done);
        const r = await runCli(
          [s.cmd, "--auto-approve", "-f", "stack.yaml", "--parallelism", String(rng.pick([4, 10]))],
          { cwd: ws.dir, emulator: emu },
        );
        done = true;
        await w;
        expectExit(r, 0, `${s.cmd} ${s.variant} with a foreign writer`);
        const live = await liveWorld(emu);
        const lost = written
          .filter((g) => !hasGrant(live, g))
          .map((g) => `${g.object} ${g.role}${g.condition ? ` [${g.condition}]` : ""} ${g.member}`);
        lost.push(...lostForeign(live));
        figures.lostForeignGrants += lost.length;
        expect(lost, `foreign grants lost by ${s.cmd} ${s.variant}`).toEqual([]);
        expect(divergence(live, s.target)).toEqual([]);
      }
      figures.foreignWriterRounds++;
      figures.foreignWrites += written.length;
      figures.foreignWriterConflicts += writerConflicts;
      // ABORTED answers that were not the writer's: converge's writes that lost a race and re-read.
      figures.convergeAbortedWrites += responses(await stats(emu), "ABORTED") - writerConflicts;
      expect(written.length).toBeGreaterThan(20);
      // Nothing the writer added is the stack's business: the plan stays clean.
      expectExit(
        await runCli(["plan", "--detailed-exitcode", "--destroy", "-f", "stack.yaml"], { cwd: ws.dir, emulator: emu }),
        0,
        "plan after destroy",
      );
    }, 300_000);
  }
});
