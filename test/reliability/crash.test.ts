// Crash safety (issue 8, item 1): SIGKILL an apply (or destroy) of 500 resources at random
// moments; then the state file always loads and validates, the lock the killed process left does
// not block, the next command converges with no error, a plan after it shows no changes, and no
// grant the stack does not own is ever lost — not even in the world as the kill left it.
//
// Every trial draws its operation, parallelism, emulator latency and kill point from a PRNG
// seeded with CONVERGE_RELIABILITY_SEED + trial, so a failing trial reproduces with
// `npx vitest run test/reliability/crash.test.ts -t "trial 7 "`.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { validate } from "../../src/schemas/index.js";
import { parseState, type State } from "../../src/state/index.js";
import { pidAlive } from "../../src/fs/errors.js";
import {
  admin,
  BASE_SEED,
  clearFaults,
  divergence,
  expectExit,
  FOREIGN_ITEMS,
  liveWorld,
  lostForeign,
  prng,
  recordFigures,
  runCli,
  seedWorld,
  setFaults,
  size,
  startCli,
  startWorld,
  stackYaml,
  stateLeads,
  tempDir,
  TOTAL_RESOURCES,
  type Rng,
  type Variant,
} from "./helpers.js";

const TRIALS = size(10, 100);

type Op = "create" | "update" | "shrink" | "move" | "destroy";
const OPS: readonly Op[] = ["create", "create", "update", "shrink", "move", "destroy"];
const TARGET: Record<Op, Variant | "destroyed"> = {
  create: "base",
  update: "changed",
  shrink: "shrunk",
  move: "moved",
  destroy: "destroyed",
};
const EXPECTED_RESOURCES: Record<Variant | "destroyed", number> = {
  base: TOTAL_RESOURCES,
  changed: TOTAL_RESOURCES,
  shrunk: TOTAL_RESOURCES - 100,
  moved: TOTAL_RESOURCES,
  destroyed: 0,
};
/** Streamed --json lines of an uninterrupted create after its plan (1 000 apply_start and
 *  apply_complete, 100 policy_write, saves and the summaries). */
const LINES_ESTIMATE = 1110;
/** The line that ends a plan in the stream (after its planned changes and counts). */
const PLAN_END = '"type":"access_summary"';

interface KillPoint {
  mode: "time" | "line";
  /** time: ms after spawn; line: kill on reading this streamed line after the plan's (1-based) … */
  at: number;
  /** … plus this many ms. */
  extraMs: number;
}

interface TrialPlan {
  index: number;
  seed: number;
  op: Op;
  parallelism: number;
  latency: { latencyMs: number; latencyJitterMs: number; seed: number };
  kills: KillPoint[];
}

function killPoint(rng: Rng): KillPoint {
  // Mostly inside the apply (after the plan is printed); some anywhere in the process's life,
  // which also covers loading, locking and the refresh reads.
  return rng.chance(0.2)
    ? { mode: "time", at: rng.int(0, 4000), extraMs: 0 }
    : { mode: "line", at: rng.int(1, LINES_ESTIMATE), extraMs: rng.int(0, 25) };
}

function planTrial(index: number): TrialPlan {
  const seed = BASE_SEED + index;
  const rng = prng(seed * 7919 + 17);
  const op = rng.pick(OPS);
  const parallelism = rng.pick([2, 4, 10]);
  const latency = { latencyMs: rng.int(0, 5), latencyJitterMs: rng.int(10, 40), seed: rng.int(1, 1_000_000) };
  // One trial in five crashes twice: the recovery run is killed as well before the final one.
  const kills = [killPoint(rng)];
  if (rng.chance(0.2)) kills.push(killPoint(rng));
  return { index, seed, op, parallelism, latency, kills };
}

const trials = Array.from({ length: TRIALS }, (_, i) => planTrial(i));

interface KillOutcome {
  phase: string;
  linesSeen: number;
  statesSaved: number;
  staleLock: "none" | "dead-pid" | "unreadable";
  stateFile: boolean;
}

const figures = {
  trials: 0,
  kills: 0,
  killPhases: {} as Record<string, number>,
  killModes: { time: 0, line: 0 },
  ops: {} as Record<string, number>,
  staleLocks: { "dead-pid": 0, unreadable: 0, none: 0 },
  noStateFileYet: 0,
  stateFilesChecked: 0,
  backupsChecked: 0,
  statesSavedBeforeKill: 0,
  leftoverTempFiles: 0,
  /** World checks (after each kill and after each recovery) … */
  foreignChecks: 0,
  /** … each over FOREIGN_ITEMS grants and auditConfigs the stack does not own. */
  foreignItemsChecked: 0,
  lostForeignGrants: 0,
  stateLeadingCloud: 0,
  recoveryFailures: 0,
  planNotClean: 0,
  /** Managed grants still live after recovery although the target no longer has them (access leaks). */
  leakedGrants: 0,
  /** Managed grants the target has that are missing after recovery. */
  missingGrants: 0,
  recoveryMs: [] as number[],
};

describe(`crash: SIGKILL during apply of ${TOTAL_RESOURCES} resources (${TRIALS} trials)`, () => {
  let converged: { world: EmulatorWorld; state: string };

  beforeAll(async () => {
    // A converged starting point for update/shrink/destroy trials: the base stack applied once.
    const { dir, remove } = await tempDir();
    const emu = await startWorld(seedWorld());
    try {
      writeFileSync(join(dir, "stack.yaml"), stackYaml("base"));
      expectExit(
        await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: dir, emulator: emu }),
        0,
        "baseline apply",
      );
      converged = {
        world: await admin<EmulatorWorld>(emu, "GET", "world"),
        state: readFileSync(join(dir, "state", "rel.json"), "utf8"),
      };
      expect(divergence(await liveWorld(emu), "base")).toEqual([]);
    } finally {
      await emu.close();
      await remove();
    }
  }, 120_000);

  afterAll(() => {
    if (!figures.trials) return; // filtered out (-t): keep the last real figures
    const ms = figures.recoveryMs.sort((a, b) => a - b);
    recordFigures("crash", {
      ...figures,
      recoveryMs: undefined,
      recoveryMsMedian: ms[Math.floor(ms.length / 2)] ?? null,
      recoveryMsMax: ms[ms.length - 1] ?? null,
      losses: figures.lostForeignGrants,
    });
  });

  /** Runs the trial's command and SIGKILLs it at `kp`; returns what the kill interrupted. */
  async function killRun(t: TrialPlan, kp: KillPoint, dir: string, emu: RunningEmulator): Promise<KillOutcome> {
    const cmd = t.op === "destroy" ? "destroy" : "apply";
    let linesSeen = 0;
    const nonJson: string[] = [];
    let statesSaved = 0;
    let writesDone = 0;
    let planEnd = -1;
    let timer: NodeJS.Timeout | undefined;
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      run.child.kill("SIGKILL");
    };
    const schedule = (ms: number) => (ms <= 0 ? kill() : (timer = setTimeout(kill, ms)));
    const run = startCli(
      [cmd, "--auto-approve", "--json", "-f", "stack.yaml", "--parallelism", String(t.parallelism)],
      {
        cwd: dir,
        emulator: emu,
        onLine: (line, i) => {
          if (killed) return;
          linesSeen = i + 1;
          try {
            const e = JSON.parse(line) as { type?: string; policy_write?: { phase: string } };
            if (e.type === "state_saved") statesSaved++;
            if (e.type === "policy_write" && e.policy_write?.phase === "done") writesDone++;
            if (planEnd < 0 && line.includes(PLAN_END)) planEnd = linesSeen;
          } catch {
            nonJson.push(line);
          }
          if (kp.mode === "line" && planEnd >= 0 && linesSeen - planEnd === kp.at && !timer) schedule(kp.extraMs);
        },
      },
    );
    if (kp.mode === "time") schedule(kp.at);
    const r = await run.done;
    clearTimeout(timer);
    // --json: every complete line on stdout is one JSON document (a kill can only cut the last).
    expect(nonJson, "non-JSON lines on stdout with --json").toEqual([]);
    const pid = run.child.pid!;
    let phase: string;
    if (r.signal === "SIGKILL") {
      phase =
        planEnd < 0
          ? "before the plan was printed (load, lock, refresh)"
          : writesDone === 0
            ? "planned, no policy write finished yet"
            : writesDone < 25
              ? "1-24 policy writes finished"
              : writesDone < 50
                ? "25-49 policy writes finished"
                : "50+ policy writes finished (final saves)";
    } else {
      expectExit(r, 0, `trial ${t.index}: the run finished before the kill`);
      phase = "finished before the kill";
    }
    // The lock the killed process left, if any: its holder is dead, so it must not block.
    const lockFile = join(dir, "state", "rel.json.lock");
    let staleLock: KillOutcome["staleLock"] = "none";
    if (existsSync(lockFile)) {
      const text = readFileSync(lockFile, "utf8");
      let info: { pid?: number } | undefined;
      try {
        info = JSON.parse(text) as { pid?: number };
      } catch {
        info = undefined;
      }
      if (info) {
        expect(info.pid, "the lock left behind is the killed process's").toBe(pid);
        expect(pidAlive(pid)).toBe(false);
        staleLock = "dead-pid";
      } else staleLock = "unreadable";
    }
    return { phase, linesSeen, statesSaved, staleLock, stateFile: existsSync(join(dir, "state", "rel.json")) };
  }

  /** The state file (and its backup) load and validate; mode 0600. */
  function checkStateFiles(dir: string): State | undefined {
    const file = join(dir, "state", "rel.json");
    if (!existsSync(file)) return undefined;
    const state = parseState(readFileSync(file, "utf8"), file);
    expect(validate("state.schema.json", state)).toEqual([]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    figures.stateFilesChecked++;
    if (existsSync(`${file}.backup`)) {
      const backup = parseState(readFileSync(`${file}.backup`, "utf8"), `${file}.backup`);
      expect(validate("state.schema.json", backup)).toEqual([]);
      expect(backup.lineage).toBe(state.lineage);
      expect(backup.serial).toBeLessThanOrEqual(state.serial);
      figures.backupsChecked++;
    }
    return state;
  }

  for (const t of trials) {
    const kills = t.kills
      .map((k) => (k.mode === "time" ? `after ${k.at}ms` : `at line ${k.at}+${k.extraMs}ms`))
      .join(", then ");
    it(`trial ${t.index} (seed ${t.seed}): ${t.op}, parallelism ${t.parallelism}, SIGKILL ${kills}`, async () => {
      const { dir, remove } = await tempDir();
      const startFrom = t.op === "create" ? seedWorld() : converged.world;
      const emu = await startWorld(startFrom);
      const target = TARGET[t.op];
      const cmd = t.op === "destroy" ? "destroy" : "apply";
      try {
        mkdirSync(join(dir, "state"));
        if (t.op !== "create") writeFileSync(join(dir, "state", "rel.json"), converged.state, { mode: 0o600 });
        writeFileSync(join(dir, "stack.yaml"), stackYaml(t.op === "destroy" ? "base" : (target as Variant)));
        const lineage = t.op === "create" ? undefined : (JSON.parse(converged.state) as State).lineage;

        figures.trials++;
        figures.ops[t.op] = (figures.ops[t.op] ?? 0) + 1;
        for (const kp of t.kills) {
          await setFaults(emu, t.latency);
          const k = await killRun(t, kp, dir, emu);
          await clearFaults(emu);
          figures.kills++;
          figures.killModes[kp.mode]++;
          figures.killPhases[k.phase] = (figures.killPhases[k.phase] ?? 0) + 1;
          figures.staleLocks[k.staleLock]++;
          figures.statesSavedBeforeKill += k.statesSaved;

          // The state file always loads and validates, and never claims a grant the cloud lacks.
          const state = checkStateFiles(dir);
          if (!state) figures.noStateFileYet++;
          if (state && lineage) expect(state.lineage).toBe(lineage);
          const live = await liveWorld(emu);
          const lost = lostForeign(live);
          figures.foreignChecks++;
          figures.foreignItemsChecked += FOREIGN_ITEMS;
          figures.lostForeignGrants += lost.length;
          expect(lost, "grants the stack does not own, right after the kill").toEqual([]);
          const leads = state ? stateLeads(state, live, target) : [];
          figures.stateLeadingCloud += leads.length;
          expect(leads, "the state claims grants the cloud does not have").toEqual([]);
        }

        // The next command converges with no error, without any manual unlock …
        const t0 = Date.now();
        const again = await runCli(
          [cmd, "--auto-approve", "-f", "stack.yaml", "--parallelism", String(t.parallelism)],
          { cwd: dir, emulator: emu },
        );
        figures.recoveryMs.push(Date.now() - t0);
        if (again.code !== 0) figures.recoveryFailures++;
        expectExit(again, 0, `trial ${t.index}: ${cmd} after the kill`);
        expect(again.stderr).not.toMatch(/state is locked|internal error/);

        // … and a plan after it shows no changes.
        const plan = await runCli(
          ["plan", "--detailed-exitcode", "-f", "stack.yaml", ...(t.op === "destroy" ? ["--destroy"] : [])],
          { cwd: dir, emulator: emu },
        );
        if (plan.code !== 0) figures.planNotClean++;
        expectExit(plan, 0, `trial ${t.index}: plan after recovery`);

        const live = await liveWorld(emu);
        const lost = lostForeign(live);
        figures.foreignChecks++;
        figures.foreignItemsChecked += FOREIGN_ITEMS;
        figures.lostForeignGrants += lost.length;
        expect(lost, "grants the stack does not own, after recovery").toEqual([]);
        const diverged = divergence(live, target);
        figures.leakedGrants += diverged.filter((x) => x.includes("should be gone")).length;
        figures.missingGrants += diverged.length - diverged.filter((x) => x.includes("should be gone")).length;
        expect(diverged, "the live world after recovery and a clean plan").toEqual([]);
        const final = checkStateFiles(dir)!;
        expect(final.resources).toHaveLength(EXPECTED_RESOURCES[target]);
        if (lineage) expect(final.lineage).toBe(lineage);
        expect(existsSync(join(dir, "state", "rel.json.lock"))).toBe(false);
        figures.leftoverTempFiles += readdirSync(join(dir, "state")).filter((n) => n.includes(".tmp-")).length;
      } finally {
        await emu.close();
        await remove();
      }
    }, 150_000);
  }
});

const INTERRUPTS = size(2, 20);

describe(`interrupt: SIGINT (Ctrl-C) during apply (${INTERRUPTS} trials)`, () => {
  const interrupts = {
    trials: 0,
    exited130: 0,
    finishedFirst: 0,
    lostForeignGrants: 0,
    leakedGrants: 0,
    missingGrants: 0,
  };
  afterAll(
    () => interrupts.trials && recordFigures("interrupt", { ...interrupts, losses: interrupts.lostForeignGrants }),
  );

  for (let i = 0; i < INTERRUPTS; i++) {
    const rng = prng((BASE_SEED + 1000 + i) * 7919);
    const op: Op = (["move", "create", "shrink"] as const)[i % 3]!;
    // Lines after the plan's. move: the no-ops print nothing; the interrupt lands among the 25
    // replacements (about 150 lines).
    const at = op === "move" ? rng.int(5, 95) : rng.int(3, 1000);
    it(
      `interrupt ${i}: ${op}, SIGINT at line ${at} after the plan: exits ` +
        `130 with the state saved and the lock released`,
      async () => {
        const { dir, remove } = await tempDir();
        const emu = await startWorld(seedWorld());
        try {
          writeFileSync(join(dir, "stack.yaml"), stackYaml("base"));
          const target = TARGET[op] as Variant;
          if (op !== "create") {
            expectExit(
              await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: dir, emulator: emu }),
              0,
              "setup apply",
            );
            writeFileSync(join(dir, "stack.yaml"), stackYaml(target));
          }
          await setFaults(emu, { latencyMs: 5, latencyJitterMs: 30, seed: rng.int(1, 1e6) });
          let planLine = -1;
          const run = startCli(["apply", "--auto-approve", "--json", "-f", "stack.yaml", "--parallelism", "4"], {
            cwd: dir,
            emulator: emu,
            // Counted from the line that ends the plan: planning's own (refresh, read, retry, the
            // planned changes) come before it.
            onLine: (l, n) => {
              if (planLine < 0 && l.includes(PLAN_END)) planLine = n;
              if (planLine >= 0 && n - planLine + 1 === at) run.child.kill("SIGINT");
            },
          });
          const r = await run.done;
          await clearFaults(emu);
          interrupts.trials++;
          if (r.code === 0) interrupts.finishedFirst++;
          else {
            expectExit(r, 130, "interrupted apply");
            expect(r.stderr).toMatch(/Interrupt received/);
            interrupts.exited130++;
          }
          const file = join(dir, "state", "rel.json");
          const state = parseState(readFileSync(file, "utf8"), file);
          expect(validate("state.schema.json", state)).toEqual([]);
          expect(existsSync(`${file}.lock`), "a graceful interrupt releases the lock").toBe(false);
          const live = await liveWorld(emu);
          expect(stateLeads(state, live, target)).toEqual([]);
          const lost = lostForeign(live);
          interrupts.lostForeignGrants += lost.length;
          expect(lost).toEqual([]);
          expectExit(
            await runCli(["apply", "--auto-approve", "-f", "stack.yaml"], { cwd: dir, emulator: emu }),
            0,
            "apply after the interrupt",
          );
          expectExit(
            await runCli(["plan", "--detailed-exitcode", "-f", "stack.yaml"], { cwd: dir, emulator: emu }),
            0,
            "plan after the interrupt",
          );
          const diverged = divergence(await liveWorld(emu), target);
          const leaked = diverged.filter((x) => x.includes("should be gone")).length;
          interrupts.leakedGrants += leaked;
          interrupts.missingGrants += diverged.length - leaked;
          expect(diverged, "managed grants after the recovery apply (leaks: 'should be gone')").toEqual([]);
        } finally {
          await emu.close();
          await remove();
        }
      },
      150_000,
    );
  }
});

describe("a replacement across objects that does not finish", () => {
  // Changing a binding's `name` replaces it: grant on the new object first, then revoke on the
  // old one. If the revoke does not happen (refused, interrupted, killed), the old grant must stay
  // known to converge so that the next apply revokes it; otherwise access silently stays granted.
  const OLD = "projects/old-project/locations/us-central1/restorePlans/rp";
  const NEW = "projects/new-project/locations/us-central1/restorePlans/rp";
  const stack = (name: string) =>
    `name: moved\nresources:\n  viewers:\n    type: cloudnative:backup/v1:RestorePlanIamBinding\n    ` +
    `properties:\n      name: ${name}\n      role: roles/rel.viewer\n      members: ` +
    `[user:alice@example.com]\n`;
  const admins = (who: string) => ({ callers: { "tok-admin-1": "user:admin@example.com" }, iamAdmins: [who] });

  it("the revoke on the old object is refused once: the next apply still revokes it", async () => {
    const { dir, remove } = await tempDir();
    const emu = await startWorld({
      projects: { "old-project": admins("user:admin@example.com"), "new-project": {} },
      restorePlans: [
        { name: OLD, policy: { bindings: [{ role: "roles/foreign.owner", members: ["user:owner@example.com"] }] } },
        { name: NEW, policy: { bindings: [] } },
      ],
    });
    const env = { CLOUDNATIVE_ACCESS_TOKEN: "tok-admin-1" };
    const cli = (args: string[]) => runCli(args, { cwd: dir, emulator: emu, env });
    try {
      writeFileSync(join(dir, "stack.yaml"), stack(OLD));
      expectExit(await cli(["apply", "--auto-approve", "-f", "stack.yaml"]), 0, "first apply");
      writeFileSync(join(dir, "stack.yaml"), stack(NEW));
      // The caller loses its rights on the old project for one apply (refresh off, so the plan
      // comes from the state and the refusal hits the revoke, after the new grant is written).
      await admin(emu, "PUT", "projects/old-project", admins("user:someone-else@example.com"));
      const refused = await cli(["apply", "--auto-approve", "--refresh=false", "-f", "stack.yaml"]);
      expectExit(refused, 1, "apply with the revoke refused");
      await admin(emu, "PUT", "projects/old-project", admins("user:admin@example.com"));

      const again = await cli(["apply", "--auto-approve", "-f", "stack.yaml"]);
      expectExit(again, 0, "apply once the rights are back");
      const live = await liveWorld(emu);
      expect(live.get(NEW)?.bindings?.find((b) => b.role === "roles/rel.viewer")?.members).toEqual([
        "user:alice@example.com",
      ]);
      expect(live.get(OLD)?.bindings?.find((b) => b.role === "roles/foreign.owner")?.members).toEqual([
        "user:owner@example.com",
      ]);
      expect(
        live.get(OLD)?.bindings?.find((b) => b.role === "roles/rel.viewer"),
        "the old grant is still live after a successful apply",
      ).toBeUndefined();
    } finally {
      await emu.close();
      await remove();
    }
  }, 120_000);
});
