// Issue 36's acceptance test, "Nothing converge grants outlives it": the fault matrix. Real CLI,
// real emulator. 40 member resources on 40 policies (20 restore plans, 20 endpoints), every
// policy already holding grants the stack does not own (another role; on half of them a foreign
// member of the very role the stack's member joins; on restore plans a conditional binding of that
// role; an auditConfig). Each trial starts a fresh emulator with 300 ms latency on every method and
// runs `apply --auto-approve --json --parallelism 4`, then:
//  - stop trials: at the Nth `policy_write` "done" line of the stream (so with writes in flight;
//    no sleeps, nothing that depends on the machine's speed) the apply gets SIGKILL, SIGHUP or
//    SIGTERM, or its reader closes stdout. Its exit is checked (SIGKILL: killed; SIGHUP: 129;
//    SIGTERM: 130; closed stdout: not 0), what it left is recorded (grants live, resources in the
//    state, intents pending) and must not have lost a foreign grant nor recorded a grant that is not
//    live. Then `apply` (no faults) exits 0, `plan --detailed-exitcode` exits 0, the state holds
//    the 40 resources, none adopted;
//  - lost-answer trials: the emulator commits 30 % of the writes and answers 500, 503 or 504, or
//    resets the connection (seeded); the apply must exit 0 with the 40 resources, none adopted, and
//    `plan --detailed-exitcode` exit 0; the faults stay on for the destroy;
// and in every trial `destroy --auto-approve` exits 0 and every policy is then exactly as it was
// before the stack (bindings, members, conditions and auditConfigs; etag and version aside).
//
// CI size: one stop point per way of stopping (drawn from a PRNG seeded with
// CONVERGE_RELIABILITY_SEED) and one trial per lost-answer kind. Soak (CONVERGE_SOAK=1, `npm run
// soak`): every way of stopping after the 1st, 10th, 25th, 38th and 40th write, and every lost-answer kind
// (and all four mixed) with two seeds each. CONVERGE_MATRIX_REPORT=FILE writes the results table
// (markdown, as in docs/RELIABILITY.md) to FILE; it is printed either way.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { EmulatorWorld, Policy, State } from "../../src/generated/schemas.js";
import { IntentJournal } from "../../src/state/local/intent-journal.js";
import {
  admin,
  BASE_SEED,
  clearFaults,
  hasGrant,
  LOCATION,
  liveWorld,
  MODE,
  PROJECT,
  prng,
  recordFigures,
  resetStats,
  runCli,
  SOAK,
  setFaults,
  startCli,
  startWorld,
  tempDir,
  type CliResult,
  type LiveWorld,
} from "./helpers.js";

// --- the world and the stack ----------------------------------------------------------------

const PER_KIND = 20;
const GRANTS = 2 * PER_KIND;
const LATENCY_MS = 300;
const PARALLELISM = 4;
const RP_MEMBER = "cloudnative:backup/v1:RestorePlanIamMember";
const EP_MEMBER = "cloudnative:aiplatform/v1beta1:EndpointIamMember";
const RP_ROLE = "roles/matrix.restoreViewer";
const EP_ROLE = "roles/matrix.invoker";
const CONDITION = {
  title: "foreign-until-2030",
  description: "not managed by the stack",
  expression: 'request.time < timestamp("2030-01-01T00:00:00Z")',
};

const rp = (i: number) => `projects/${PROJECT}/locations/${LOCATION}/restorePlans/matrix-rp-${i}`;
const ep = (i: number) => `projects/${PROJECT}/locations/${LOCATION}/endpoints/matrix-ep-${i}`;
const OBJECTS = [
  ...Array.from({ length: PER_KIND }, (_, i) => rp(i)),
  ...Array.from({ length: PER_KIND }, (_, i) => ep(i)),
];

/** The stack's grants: one member on each object. */
const STACK = [
  ...Array.from({ length: PER_KIND }, (_, i) => ({
    address: `rp${i}`,
    type: RP_MEMBER,
    object: rp(i),
    id: `matrix-rp-${i}`,
    role: RP_ROLE,
    member: `serviceAccount:matrix-rp-${i}@${PROJECT}.iam.gserviceaccount.com`,
  })),
  ...Array.from({ length: PER_KIND }, (_, i) => ({
    address: `ep${i}`,
    type: EP_MEMBER,
    object: ep(i),
    id: `matrix-ep-${i}`,
    role: EP_ROLE,
    member: `serviceAccount:matrix-ep-${i}@${PROJECT}.iam.gserviceaccount.com`,
  })),
];

function seed(): EmulatorWorld {
  const audit = [{ service: "allServices", auditLogConfigs: [{ logType: "DATA_READ" as const }] }];
  return {
    projects: { [PROJECT]: { number: "200000000036" } },
    restorePlans: Array.from({ length: PER_KIND }, (_, i) => ({
      name: rp(i),
      policy: {
        version: 3,
        bindings: [
          { role: "roles/foreign.owner", members: [`user:owner-rp-${i}@example.com`] },
          // Half the stack's members join a binding that has a foreign member; the others create it.
          ...(i % 2 === 0 ? [{ role: RP_ROLE, members: [`user:foreign-rp-${i}@example.com`] }] : []),
          { role: RP_ROLE, members: [`user:cond-rp-${i}@example.com`], condition: CONDITION },
        ],
        auditConfigs: audit,
      },
    })),
    endpoints: Array.from({ length: PER_KIND }, (_, i) => ({
      name: ep(i),
      policy: {
        bindings: [
          { role: "roles/foreign.owner", members: [`user:owner-ep-${i}@example.com`] },
          ...(i % 2 === 1 ? [{ role: EP_ROLE, members: [`group:foreign-ep-${i}@example.com`] }] : []),
        ],
      },
    })),
  };
}

function stackYaml(): string {
  const out = ["name: matrix", "provider:", `  project: ${PROJECT}`, `  location: ${LOCATION}`, "resources:"];
  for (const g of STACK)
    out.push(
      `  ${g.address}:`,
      `    type: ${g.type}`,
      "    properties:",
      `      name: ${g.id}`,
      `      role: ${g.role}`,
      `      member: ${g.member}`,
    );
  return out.join("\n") + "\n";
}

/** A policy as compared with the world before the stack: etag and version aside, order aside. */
function normalised(p: Policy | undefined): string {
  const bindings = (p?.bindings ?? [])
    .map((b) => JSON.stringify({ role: b.role, condition: b.condition ?? null, members: [...b.members].sort() }))
    .sort();
  const audit = (p?.auditConfigs ?? []).map((a) => JSON.stringify(a)).sort();
  return JSON.stringify({ bindings, audit });
}

const snapshot = (live: LiveWorld) => new Map(OBJECTS.map((o) => [o, normalised(live.get(o))]));

/** The objects whose policy differs from `before`. */
function changedSince(before: Map<string, string>, live: LiveWorld): string[] {
  return OBJECTS.filter((o) => normalised(live.get(o)) !== before.get(o)).map(
    (o) => `${o}: before ${before.get(o)}, now ${normalised(live.get(o))}`,
  );
}

/** Grants of the world before the stack that are gone from `live`. */
function foreignLost(beforeWorld: LiveWorld, live: LiveWorld): string[] {
  const out: string[] = [];
  for (const o of OBJECTS) {
    for (const b of beforeWorld.get(o)?.bindings ?? []) {
      for (const m of b.members)
        if (
          !hasGrant(live, {
            object: o,
            role: b.role,
            ...(b.condition ? { condition: b.condition.title } : {}),
            member: m,
          })
        )
          out.push(`${o} ${b.role}${b.condition ? ` [${b.condition.title}]` : ""} ${m}`);
    }
    // Restore plans' policies have auditConfigs; aiplatform v1beta1's Policy has none.
    if (o.includes("/restorePlans/") && !live.get(o)?.auditConfigs?.length) out.push(`${o} auditConfigs`);
  }
  return out;
}

const liveStackGrants = (live: LiveWorld) => STACK.filter((g) => hasGrant(live, g));

// --- trials ---------------------------------------------------------------------------------

type Stop = "SIGKILL" | "SIGHUP" | "SIGTERM" | "closed stdout";
type LostKind = "500" | "503" | "504" | "reset";
const STOPS: readonly Stop[] = ["SIGKILL", "SIGHUP", "SIGTERM", "closed stdout"];
const LOST_KINDS: readonly LostKind[] = ["500", "503", "504", "reset"];
/** Where a soak run stops each apply: after this many writes finished (of 40, 4 at a time). At
 *  the 40th every grant is live and the final save may not be done: the apply may also finish
 *  before the stop lands (exit 0), which is recorded as such. */
const SOAK_POINTS = [1, 10, 25, 38, GRANTS];
const LOST_RATE = 0.3;

type Trial =
  | { id: string; kind: "stop"; stop: Stop; point: number }
  | { id: string; kind: "lost"; kinds: LostKind[]; seed: number };

function trials(): Trial[] {
  const out: Trial[] = [];
  const rng = prng(BASE_SEED * 31 + 36);
  for (const stop of STOPS) {
    const points = SOAK ? SOAK_POINTS : [rng.int(1, GRANTS - 2)];
    for (const point of points) out.push({ id: `${stop} @${point}`, kind: "stop", stop, point });
  }
  const mixes: LostKind[][] = [...LOST_KINDS.map((k) => [k]), ...(SOAK ? [[...LOST_KINDS]] : [])];
  mixes.forEach((kinds, k) => {
    for (let n = 0; n < (SOAK ? 2 : 1); n++) {
      const s = BASE_SEED + 3600 + 10 * k + n;
      out.push({ id: `lost ${kinds.join("+")} seed ${s}`, kind: "lost", kinds, seed: s });
    }
  });
  return out;
}

/** The status of the apply's `apply_result` line ("complete", "interrupted", …), if it printed one. */
function applyStatus(stdout: string): string | undefined {
  const line = stdout.split("\n").find((l) => l.includes('"type":"apply_result"'));
  return line ? (JSON.parse(line) as { result?: { status?: string } }).result?.status : undefined;
}

/** Exit codes each way of stopping must give. SIGTERM is a person's interrupt, as Ctrl-C: when
 *  every change had started before it came (its writes in flight finish), the apply is complete
 *  and exits 0 (src/cli/interrupt.ts: a hangup or a closed output keeps its own code whatever the
 *  command returns, because what it printed was not all read). */
function expectedExit(stop: Stop, r: CliResult): string | undefined {
  const got = r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
  switch (stop) {
    case "SIGKILL":
      return r.signal === "SIGKILL" ? undefined : `SIGKILL: expected death by SIGKILL, got ${got}`;
    case "SIGHUP":
      return r.code === 129 ? undefined : `SIGHUP: expected exit 129, got ${got}`;
    case "SIGTERM":
      if (r.code === 0 && applyStatus(r.stdout) === "complete") return undefined;
      return r.code === 130
        ? undefined
        : `SIGTERM: expected exit 130 (or 0 with the apply complete), got ${got} ` +
            `(apply ${applyStatus(r.stdout) ?? "printed no result"})`;
    case "closed stdout":
      return r.code !== null && r.code !== 0 ? undefined : `closed stdout: expected a non-zero exit, got ${got}`;
  }
}

interface Row {
  id: string;
  point: string;
  /** How the interrupted (or faulted) apply ended. */
  exit: string;
  liveAfter: number | null;
  stateAfter: number | null;
  intentsAfter: number | null;
  lockLeft: boolean | null;
  lostAnswers: string;
  settled: string;
  nextApply: string;
  plan: string;
  finalState: string;
  destroy: string;
  restored: boolean | null;
  seconds: number;
  problems: string[];
}

const rows: Row[] = [];
const STATE = join("state", "matrix.json");

function readState(dir: string): State | undefined {
  const f = join(dir, STATE);
  return existsSync(f) ? (JSON.parse(readFileSync(f, "utf8")) as State) : undefined;
}

const exitText = (r: CliResult) => (r.signal ? `killed (${r.signal})` : String(r.code));
const tail = (r: CliResult) =>
  `\n--- stdout (tail)\n${r.stdout.slice(-2500)}\n--- stderr (tail)\n${r.stderr.slice(-2500)}`;

async function lostAnswerCount(emu: RunningEmulator): Promise<number> {
  const s = await admin<{ lostResponses?: Record<string, Record<string, number>> }>(emu, "GET", "stats");
  return Object.values(s.lostResponses ?? {}).reduce((a, m) => a + Object.values(m).reduce((x, y) => x + y, 0), 0);
}

async function runTrial(t: Trial, row: Row): Promise<void> {
  const t0 = Date.now();
  const { dir, remove } = await tempDir("converge-matrix-");
  const emu = await startWorld(seed());
  const problems = row.problems;
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
    return ok;
  };
  try {
    mkdirSync(join(dir, "state"));
    writeFileSync(join(dir, "stack.yaml"), stackYaml());
    const beforeWorld = await liveWorld(emu);
    const before = snapshot(beforeWorld);
    const cli = (args: string[]) =>
      runCli([...args, "-f", "stack.yaml"], { cwd: dir, emulator: emu, timeoutMs: 240_000 });
    const faults =
      t.kind === "lost"
        ? { latencyMs: LATENCY_MS, lostResponses: { rate: LOST_RATE, kinds: t.kinds }, seed: t.seed }
        : { latencyMs: LATENCY_MS };
    await setFaults(emu, faults);

    // The apply: stopped at the trial's point, or under lost answers.
    let done = 0;
    let stoppedAt: number | null = null;
    const stop = t.kind === "stop" ? t : undefined;
    const run = startCli(
      ["apply", "--auto-approve", "--json", "--parallelism", String(PARALLELISM), "-f", "stack.yaml"],
      {
        cwd: dir,
        emulator: emu,
        timeoutMs: 240_000,
        onLine: (line) => {
          if (!stop || stoppedAt !== null || !line.includes('"policy_write"')) return;
          const e = JSON.parse(line) as { policy_write?: { phase?: string } };
          if (e.policy_write?.phase !== "done" || ++done !== stop.point) return;
          stoppedAt = done;
          if (stop.stop === "closed stdout") run.child.stdout!.destroy();
          else run.child.kill(stop.stop);
        },
      },
    );
    const first = await run.done;
    row.exit = exitText(first);
    if (stop) {
      if (
        check(
          stoppedAt !== null,
          `the apply ended (${exitText(first)}) before its ${ordinal(stop.point)} write finished`,
        )
      ) {
        if (stop.point === GRANTS && first.code === 0) row.exit = "0 (finished first)";
        else {
          const bad = expectedExit(stop.stop, first);
          check(!bad, `${bad}${tail(first)}`);
          if (!bad && first.code === 0) row.exit = "0 (complete: every write had started)";
        }
      }
      row.lostAnswers = "-";
    } else {
      check(first.code === 0, `apply under lost answers: exit ${exitText(first)}${tail(first)}`);
      row.lostAnswers = String(await lostAnswerCount(emu));
    }

    // What the stopped (or faulted) apply left.
    const stateFile = join(dir, STATE);
    const afterLive = await liveWorld(emu);
    const afterState = readState(dir);
    row.liveAfter = liveStackGrants(afterLive).length;
    row.stateAfter = afterState?.resources.length ?? 0;
    row.intentsAfter = (await new IntentJournal(`${stateFile}.intents`).pending()).length;
    row.lockLeft = existsSync(`${stateFile}.lock`);
    const lost = foreignLost(beforeWorld, afterLive);
    check(lost.length === 0, `foreign grants lost after the stopped apply: ${lost.join("; ")}`);
    const leads = (afterState?.resources ?? []).filter((r) => {
      const g = STACK.find((s) => s.address === r.address);
      return !g || !hasGrant(afterLive, g);
    });
    check(leads.length === 0, `the state records grants that are not live: ${leads.map((r) => r.address).join(", ")}`);
    if (stop && stop.stop !== "SIGKILL" && stoppedAt !== null) {
      // Stopped, not killed: the writes in flight finished, the state was saved with every grant
      // the apply made, and the lock released.
      const saved = new Set((afterState?.resources ?? []).map((r) => r.address));
      const unsaved = liveStackGrants(afterLive)
        .filter((g) => !saved.has(g.address))
        .map((g) => g.address);
      check(unsaved.length === 0, `${stop.stop}: grants live but not in the saved state: ${unsaved.join(", ")}`);
      check(!row.lockLeft, `${stop.stop}: the state lock was left`);
    }

    if (stop) {
      // The next apply runs without faults (and without latency: it only has to converge).
      await clearFaults(emu);
      const next = await cli(["apply", "--auto-approve"]);
      row.nextApply = exitText(next);
      check(next.code === 0, `the next apply: exit ${exitText(next)}${tail(next)}`);
      const m = /Settled (\d+) writes? an interrupted run left pending: (\d+) landed/.exec(next.stdout + next.stderr);
      row.settled = m ? `${m[1]} (${m[2]} landed)` : "-";
    } else {
      row.nextApply = "-";
      row.settled = "-";
    }

    const plan = await cli(["plan", "--detailed-exitcode"]);
    row.plan = exitText(plan);
    check(plan.code === 0, `plan --detailed-exitcode after the apply: exit ${exitText(plan)}${tail(plan)}`);
    const state = readState(dir);
    const adopted = (state?.resources ?? []).filter((r) => r.adopted).map((r) => r.address);
    row.finalState = `${state?.resources.length ?? 0}${adopted.length ? `, ${adopted.length} adopted` : ""}`;
    check(
      state?.resources.length === GRANTS,
      `the state holds ${state?.resources.length ?? 0} resources, not ${GRANTS}`,
    );
    check(adopted.length === 0, `resources recorded as adopted: ${adopted.join(", ")}`);
    const converged = await liveWorld(emu);
    const missing = STACK.filter((g) => !hasGrant(converged, g)).map((g) => g.address);
    check(missing.length === 0, `grants of the stack missing after the apply: ${missing.join(", ")}`);

    // destroy: for lost-answer trials, under the same faults (a fresh sequence).
    if (t.kind === "lost") {
      await resetStats(emu);
      await setFaults(emu, { ...faults, seed: t.seed + 1 });
    }
    const destroy = await cli(["destroy", "--auto-approve"]);
    row.destroy = exitText(destroy);
    if (t.kind === "lost") {
      const n = await lostAnswerCount(emu);
      row.lostAnswers += ` + ${n}`;
      row.destroy += ` (${n} lost)`;
      await clearFaults(emu);
    }
    check(destroy.code === 0, `destroy: exit ${exitText(destroy)}${tail(destroy)}`);
    const end = await liveWorld(emu);
    const changed = changedSince(before, end);
    row.restored = changed.length === 0;
    check(changed.length === 0, `policies not as before the stack after destroy:\n${changed.join("\n")}`);
    const endState = readState(dir);
    check(
      (endState?.resources.length ?? 0) === 0,
      `the state after destroy holds ${endState?.resources.length} resources`,
    );
    const pending = (await new IntentJournal(`${stateFile}.intents`).pending()).length;
    check(pending === 0, `${pending} intents pending after destroy`);
  } finally {
    row.seconds = Math.round((Date.now() - t0) / 100) / 10;
    await emu.close();
    await remove();
  }
}

// --- the report -----------------------------------------------------------------------------

function table(): string {
  const yes = (b: boolean | null) => (b === null ? "-" : b ? "yes" : "no");
  const head = [
    "trial",
    "stopped after write",
    "exit",
    "stack grants live after",
    "resources in state after",
    "intents pending after",
    "lock left",
    "answers lost (apply + destroy)",
    "next apply: settled (landed)",
    "next apply exit",
    "plan exit",
    "state: resources",
    "destroy exit",
    "world as before",
    "s",
    "result",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const r of rows) {
    lines.push(
      `| ${[
        r.id,
        r.point,
        r.exit,
        r.liveAfter ?? "-",
        r.stateAfter ?? "-",
        r.intentsAfter ?? "-",
        yes(r.lockLeft),
        r.lostAnswers,
        r.settled,
        r.nextApply,
        r.plan,
        r.finalState,
        r.destroy,
        yes(r.restored),
        r.seconds,
        r.problems.length
          ? `**FAIL**: ${r.problems
              .map((p) => p.split("\n")[0])
              .join("; ")
              .replaceAll("|", "\\|")}`
          : "pass",
      ].join(" | ")} |`,
    );
  }
  return lines.join("\n");
}

const TRIALS = trials();
const ordinal = (n: number) =>
  `${n}${n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th")}`;

describe(
  `fault matrix (issue 36): ${GRANTS} grants over ${GRANTS} policies at ` +
    `${LATENCY_MS} ms, ${TRIALS.length} trials (${MODE})`,
  () => {
    afterAll(() => {
      if (!rows.length) return;
      const md = table();
      console.log(`\n[fault matrix ${MODE}, base seed ${BASE_SEED}]\n${md}\n`);
      if (process.env.CONVERGE_MATRIX_REPORT) writeFileSync(process.env.CONVERGE_MATRIX_REPORT, md + "\n");
      recordFigures("fault-matrix", {
        trials: rows.length,
        passed: rows.filter((r) => !r.problems.length).length,
        notRestored: rows.filter((r) => r.restored === false).length,
        seconds: rows.reduce((a, r) => a + r.seconds, 0),
      });
    });

    for (const t of TRIALS) {
      const what =
        t.kind === "stop"
          ? `${t.stop} after the ${ordinal(t.point)} finished write`
          : `${Math.round(LOST_RATE * 100)} % of write answers lost (${t.kinds.join(", ")}, seed ${t.seed})`;
      it(`${t.id}: ${what}; the next apply converges and destroy leaves every policy as it was`, async () => {
        const row: Row = {
          id: t.id,
          point: t.kind === "stop" ? String(t.point) : "-",
          exit: "-",
          liveAfter: null,
          stateAfter: null,
          intentsAfter: null,
          lockLeft: null,
          lostAnswers: "-",
          settled: "-",
          nextApply: "-",
          plan: "-",
          finalState: "-",
          destroy: "-",
          restored: null,
          seconds: 0,
          problems: [],
        };
        rows.push(row);
        try {
          await runTrial(t, row);
        } catch (e) {
          row.problems.push(`error: ${(e as Error).message}`);
        }
        expect(row.problems, `trial ${t.id} (base seed ${BASE_SEED})`).toEqual([]);
      }, 300_000);
    }
  },
);
