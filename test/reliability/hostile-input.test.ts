// Issue 12, the bad-input fuzzer: hostile stacks, saved plans and cloud responses, 10,000 cases at
// the soak size (`npm run soak`), a few hundred in CI. Every case must end in a result or a clear
// error (a UserError, or a CloudError for the cloud's own failures): never another exception (a
// crash), never beyond its time bound (a hang), never a cloud write it should not make, never a
// file written outside the stack's state directory, never an edited plan accepted for apply with
// grants other than those reviewed. Stacks and plans run in-process over a cloud of functions;
// responses come from a malicious server on 127.0.0.1 through the real client, and a sample
// through the real CLI.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { checkNotStale, checkSameChanges, checkStackName } from "../../src/engine/saved-plan-checks.js";
import { readSavedPlan } from "../../src/cli/commands/saved-plan-file.js";
import { diagnosticLines } from "../../src/diagnostics/diagnostic-lines.js";
import { toPlain } from "../../src/diagnostics/lines.js";
import { isCloudError } from "../../src/cloud/errors.js";
import { UserError, type Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { openCloud } from "../../src/connect/cloud.js";
import { plan } from "../../src/plan/planner.js";
import { bindingState, epName, makeState, memberState, planOptions, rpName, stackOf } from "../fixtures/builders.js";
import {
  canon,
  grantsOf,
  planCase,
  planScenarios,
  PLAN_KEY,
  savedPlanFile,
  type PlanCase,
  type PlanScenario,
} from "./hostile-plan-cases.js";
import {
  caseStack,
  projectOf,
  responseCase,
  startResponseServer,
  type ResponseCase,
  type ResponseServer,
} from "./hostile-responses.js";
import { fuzzWorld, renderCase, stackCase } from "./hostile-stack-cases.js";
import { runStackCase, type StackOutcome } from "./hostile-stack-run.js";
import { BASE_SEED, recordFigures, runCli, size, tempDir } from "./helpers.js";
import { changed, tree } from "../support/file-tree.js";

const STACK_CASES = size(250, 4_000);
const PLAN_CASES = size(300, 3_000);
const RESPONSE_CASES = size(150, 2_900);
const CLI_CASES = size(4, 100);
/** The call deadline of the in-process client and of the CLI (--call-timeout). */
const CALL_MS = 1_000;
/** Every case's time bound: generous for a loaded 2-core machine, far below what a hang would take. */
const STACK_BOUND_MS = 10_000;
const PLAN_BOUND_MS = 5_000;
const RESPONSE_BOUND_MS = 2 * CALL_MS + 3_000;
const CLI_BOUND_MS = 30_000;
/** A case still running after this is abandoned as a hang. */
const HANG_MS = 60_000;

const figures = {
  stacks: {
    cases: 0,
    rejectedAtLoad: 0,
    erroredAtPlan: 0,
    clean: 0,
    applied: 0,
    userErrors: 0,
    crashes: 0,
    hangs: 0,
    writesWithErrors: 0,
    writesOfCleanStacks: 0,
    diagnosticsWithoutPosition: 0,
    escapes: 0,
    slowestMs: 0,
  },
  plans: {
    cases: 0,
    refused: {} as Record<string, number>,
    accepted: 0,
    acceptedEdited: 0,
    grantEscapes: 0,
    sealEscapes: 0,
    crashes: 0,
    hangs: 0,
    slowestMs: 0,
  },
  responses: {
    cases: 0,
    planned: 0,
    erroredPlans: 0,
    cloudErrors: 0,
    userErrors: 0,
    crashes: 0,
    hangs: 0,
    writes: 0,
    unsafeText: 0,
    requests: 0,
    slowestMs: 0,
  },
  cli: {
    cases: 0,
    exit0: 0,
    exit1: 0,
    crashes: 0,
    hangs: 0,
    writes: 0,
    filesOutsideState: 0,
    unsafeText: 0,
    notOneJsonDocument: 0,
    slowestMs: 0,
  },
};
const failures: string[] = [];
afterAll(() => {
  const { stacks: s, plans: p, responses: r, cli: c } = figures;
  if (!s.cases && !p.cases && !r.cases && !c.cases) return;
  recordFigures("hostile-input", {
    cases: s.cases + p.cases + r.cases + c.cases,
    crashes: s.crashes + p.crashes + r.crashes + c.crashes,
    hangs: s.hangs + p.hangs + r.hangs + c.hangs,
    writes: s.writesWithErrors + r.writes + c.writes,
    escapes: s.escapes + p.grantEscapes + p.sealEscapes + c.filesOutsideState,
    ...figures,
  });
});

/** Records a failure (the first few are shown in full) and counts it. */
function fail(what: string, detail: string): void {
  failures.push(`${what}\n${detail.slice(0, 3000)}`);
}
const shown = () => failures.slice(0, 5).join("\n\n");

/** `fn`, or "hang" when it has not settled after `ms`. */
async function bounded<T>(fn: () => Promise<T>, ms: number): Promise<T | "hang"> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<"hang">((r) => (timer = setTimeout(() => r("hang"), ms)));
  try {
    return await Promise.race([fn(), hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Control and bidi characters a terminal would act on (newline and tab are fine). */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const rendered = (diags: readonly Diagnostic[]) => toPlain(diagnosticLines(diags));

// --- 1. stacks ---------------------------------------------------------------------------------

describe(`hostile stacks: load → plan → apply over a cloud of functions (${STACK_CASES} cases)`, () => {
  it("only UserErrors, bounded time, positioned diagnostics, no write unless the stack is clean", async () => {
    const { dir, remove } = await tempDir("converge-hostile-stacks-");
    try {
      const cases = fc.sample(stackCase, { numRuns: STACK_CASES, seed: BASE_SEED + 120 });
      const f = figures.stacks;
      for (const [i, c] of cases.entries()) {
        const bytes = renderCase(c);
        const t0 = Date.now();
        const o = await bounded(
          () => runStackCase(join(dir, "stack.yaml"), bytes, fuzzWorld(c.crowdedWorld)),
          HANG_MS,
        ).catch((e: unknown) => ({ kind: "threw", error: e }) as const);
        const ms = Date.now() - t0;
        f.cases++;
        f.slowestMs = Math.max(f.slowestMs, ms);
        const what = `stack case ${i} (seed ${BASE_SEED + 120}): ${JSON.stringify(c).slice(0, 600)}`;
        if (o === "hang" || ms > STACK_BOUND_MS) {
          f.hangs++;
          fail(`${what}: no result after ${ms} ms`, "");
          continue;
        }
        if (o.kind === "threw") {
          if (o.error instanceof UserError) f.userErrors++;
          else {
            f.crashes++;
            fail(`${what}: crashed`, (o.error as Error)?.stack ?? String(o.error));
          }
          continue;
        }
        tally(f, o, what);
      }
      expect(f.writesOfCleanStacks, "the clean stacks applied: the write counter works").toBeGreaterThan(0);
      expect(f.rejectedAtLoad + f.erroredAtPlan, "most hostile stacks are refused").toBeGreaterThan(STACK_CASES / 2);
    } finally {
      await remove();
    }
    expect(
      {
        crashes: figures.stacks.crashes,
        hangs: figures.stacks.hangs,
        writesWithErrors: figures.stacks.writesWithErrors,
        diagnosticsWithoutPosition: figures.stacks.diagnosticsWithoutPosition,
        escapes: figures.stacks.escapes,
      },
      shown(),
    ).toEqual({
      crashes: 0,
      hangs: 0,
      writesWithErrors: 0,
      diagnosticsWithoutPosition: 0,
      escapes: 0,
    });
  }, 3_600_000);
});

function tally(f: typeof figures.stacks, o: StackOutcome, what: string): void {
  if (o.kind === "rejected") f.rejectedAtLoad++;
  else if (o.kind === "errored") f.erroredAtPlan++;
  else {
    f.clean++;
    if (o.applied) f.applied++;
  }
  if (o.kind === "errored" || o.kind === "rejected") f.writesWithErrors += o.writes;
  else f.writesOfCleanStacks += o.writes;
  f.diagnosticsWithoutPosition += o.unpositioned.length;
  f.escapes += o.escapes.length;
  for (const p of [...o.unpositioned, ...o.escapes]) fail(`${what}: ${p}`, "");
  if (o.writes && o.kind !== "clean") fail(`${what}: ${o.writes} writes for a stack with errors`, "");
}

// --- 2. saved plans ----------------------------------------------------------------------------

const REFUSALS: [string, RegExp][] = [
  ["unreadable", /cannot read the saved plan|is not valid JSON/],
  ["not a plan", /is not a converge plan/],
  ["other format", /was saved in plan format/],
  ["digest", /digest/],
  ["signature", /signature|is not signed/],
  ["errored", /has errors/],
  ["other stack", /is for stack/],
  ["stale", /is stale/],
  ["differs", /differs from what apply would do now/],
];

/** The checks `apply PLANFILE` makes, in its order; throws a UserError at the first refusal. */
function applyChecks(file: string, s: PlanScenario, c: PlanCase) {
  const saved = readSavedPlan(file, c.keyAtApply ? PLAN_KEY : undefined);
  checkStackName(saved, file, s.stack.name, s.stack.file);
  checkNotStale(saved, file, s.prior);
  checkSameChanges(saved, file, s.fresh);
  return saved;
}

const content = (p: unknown) => {
  const { digest: _d, signature: _s, ...rest } = p as Record<string, unknown>;
  return canon(rest);
};

describe(`hostile saved plans: edited, resealed, damaged (${PLAN_CASES} cases)`, () => {
  let scenarios: PlanScenario[];
  beforeAll(async () => {
    scenarios = await planScenarios();
  });

  it(
    "no edited plan passes the seal and the comparison with grants " + "other than the reviewed ones; only UserErrors",
    async () => {
      const { dir, remove } = await tempDir("converge-hostile-plans-");
      const mute = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
      const f = figures.plans;
      try {
        // The unedited plans pass (the checks are not refusing everything).
        for (const s of scenarios) {
          const c = {
            scenario: 0,
            signed: true,
            keyAtApply: true,
            edits: [],
            reseal: "keep",
            bytes: null,
          } satisfies PlanCase;
          writeFileSync(join(dir, "plan.json"), savedPlanFile(s, c).bytes);
          expect(grantsOf(applyChecks(join(dir, "plan.json"), s, c))).toBe(grantsOf(s.plan));
        }
        const cases = fc.sample(planCase, { numRuns: PLAN_CASES, seed: BASE_SEED + 121 });
        for (const [i, c] of cases.entries()) {
          const s = scenarios[c.scenario]!;
          const file = join(dir, `plan-${i % 8}.json`);
          const what =
            `plan case ${i} (seed ${BASE_SEED + 121}, scenario ` + `${s.what}): ${JSON.stringify(c).slice(0, 800)}`;
          const t0 = Date.now();
          let accepted: ReturnType<typeof applyChecks> | undefined;
          writeFileSync(file, savedPlanFile(s, c).bytes);
          try {
            accepted = applyChecks(file, s, c);
          } catch (e) {
            if (!(e instanceof UserError)) {
              f.crashes++;
              fail(`${what}: crashed`, (e as Error)?.stack ?? String(e));
            } else {
              const reason = REFUSALS.find(([, re]) => re.test(e.diagnostics[0]?.summary ?? ""))?.[0] ?? "other";
              f.refused[reason] = (f.refused[reason] ?? 0) + 1;
            }
          }
          const ms = Date.now() - t0;
          f.cases++;
          f.slowestMs = Math.max(f.slowestMs, ms);
          if (ms > PLAN_BOUND_MS) {
            f.hangs++;
            fail(`${what}: ${ms} ms`, "");
          }
          if (accepted) checkAccepted(accepted, s, c, what);
        }
      } finally {
        mute.mockRestore();
        await remove();
      }
      expect(
        { crashes: f.crashes, hangs: f.hangs, grantEscapes: f.grantEscapes, sealEscapes: f.sealEscapes },
        shown(),
      ).toEqual({ crashes: 0, hangs: 0, grantEscapes: 0, sealEscapes: 0 });
      expect(f.accepted, "some plans (unedited, or edited harmlessly and resealed) are accepted").toBeGreaterThan(0);
      expect(f.refused.differs ?? 0, "edits behind a recomputed digest are caught by the comparison").toBeGreaterThan(
        0,
      );
    },
    3_600_000,
  );
});

/** An accepted plan: its grants are the reviewed ones, and its seal is one the rules allow. */
function checkAccepted(saved: object, s: PlanScenario, c: PlanCase, what: string): void {
  const f = figures.plans;
  f.accepted++;
  const unchanged = content(saved) === content(JSON.parse(JSON.stringify(s.plan)));
  if (!unchanged) f.acceptedEdited++;
  if (grantsOf(saved as never) !== grantsOf(s.plan)) {
    f.grantEscapes++;
    fail(`${what}: accepted with other grants`, `${grantsOf(saved as never)}\n--- reviewed\n${grantsOf(s.plan)}`);
  }
  // The old seal covers only the old content; with the key, only the key's signature is accepted.
  const sealOk =
    c.reseal === "keep" ? unchanged && (!c.keyAtApply || c.signed) : !c.keyAtApply || c.reseal === "rightKey";
  if (!sealOk || (c.reseal === "strip" && !unchanged)) {
    f.sealEscapes++;
    fail(`${what}: accepted with a seal it should refuse`, "");
  }
}

// --- 3. a hostile cloud --------------------------------------------------------------------------

/** A prior state on the case's project: refresh reads it, and the orphan is a delete. */
function priorFor(id: number) {
  const p = projectOf(id);
  return makeState("fz", [
    bindingState(
      "viewers",
      { name: rpName("nightly", p), role: "roles/gkebackup.viewer", members: ["user:bob@example.com"] },
      "e1",
    ),
    memberState("dropped", { name: epName("churn", p), role: "roles/fuzz.old", member: "user:gone@example.com" }, "e2"),
  ]);
}

/** Runs `work` over `items` with at most `n` at a time. */
async function pool<T>(items: readonly T[], n: number, work: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i]!, i);
      }
    }),
  );
}

const NO_PROXY_ENV = { HTTPS_PROXY: "", HTTP_PROXY: "", NO_PROXY: "", https_proxy: "", http_proxy: "", no_proxy: "" };
const setCalls = (seen: { url: string }[]) => seen.filter((x) => x.url.includes(":setIamPolicy")).length;

describe(`a hostile cloud on 127.0.0.1 (${RESPONSE_CASES} plans in-process, ${CLI_CASES} through the CLI)`, () => {
  let srv: ResponseServer;
  beforeAll(async () => {
    srv = await startResponseServer();
  });
  afterAll(() => srv?.server.close());

  it(
    "plan succeeds or fails with a CloudError/UserError, within " + "the call deadline, sending no setIamPolicy",
    async () => {
      const { dir, remove } = await tempDir("converge-hostile-cloud-");
      const f = figures.responses;
      const cases = fc.sample(responseCase, { numRuns: RESPONSE_CASES, seed: BASE_SEED + 122 });
      try {
        await pool(cases, 6, async (c, id) => {
          const seen = srv.register(id, c);
          const what = `response case ${id} (seed ${BASE_SEED + 122}): ${JSON.stringify(c).slice(0, 1000)}`;
          const t0 = Date.now();
          const o = await bounded(() => planAgainst(id, c, dir, srv.server.hostPort), HANG_MS).catch((e: unknown) => ({
            threw: e,
          }));
          const ms = Date.now() - t0;
          // Let answers still in flight arrive before counting what the case sent.
          await new Promise((r) => setTimeout(r, 20));
          srv.unregister(id);
          f.cases++;
          f.requests += seen.length;
          f.slowestMs = Math.max(f.slowestMs, ms);
          f.writes += setCalls(seen);
          if (setCalls(seen)) fail(`${what}: setIamPolicy sent while planning`, "");
          if (o === "hang" || ms > RESPONSE_BOUND_MS) {
            f.hangs++;
            return fail(`${what}: no result after ${ms} ms`, "");
          }
          if ("threw" in o) {
            const e = o.threw;
            if (e instanceof UserError) f.userErrors++;
            else if (isCloudError(e)) f.cloudErrors++;
            else {
              f.crashes++;
              return fail(`${what}: crashed`, (e as Error)?.stack ?? String(e));
            }
            const text = rendered(
              e instanceof UserError ? e.diagnostics : [{ severity: "error", summary: (e as Error).message }],
            );
            if (UNSAFE.test(text)) {
              f.unsafeText++;
              fail(`${what}: control characters in ${JSON.stringify(text.slice(0, 500))}`, "");
            }
            return;
          }
          if (o.errored) f.erroredPlans++;
          else f.planned++;
          if (UNSAFE.test(rendered(o.diagnostics))) {
            f.unsafeText++;
            fail(`${what}: control characters in the diagnostics`, rendered(o.diagnostics));
          }
        });
      } finally {
        await remove();
      }
      expect({ crashes: f.crashes, hangs: f.hangs, writes: f.writes, unsafeText: f.unsafeText }, shown()).toEqual({
        crashes: 0,
        hangs: 0,
        writes: 0,
        unsafeText: 0,
      });
      expect(f.planned, "some cases plan (the server is not always broken)").toBeGreaterThan(0);
      expect(f.erroredPlans + f.cloudErrors, "most cases fail cleanly").toBeGreaterThan(RESPONSE_CASES / 4);
    },
    3_600_000,
  );

  it(
    "the real CLI: exit 0 or 1, no internal error, no control characters, one JSON " +
      "document with --json, nothing written outside the state directory",
    async () => {
      const { dir, remove } = await tempDir("converge-hostile-cli-");
      const f = figures.cli;
      const cases = fc.sample(responseCase, { numRuns: CLI_CASES, seed: BASE_SEED + 123 });
      try {
        for (const [i, c] of cases.entries()) {
          const id = 1_000_000 + i;
          const proj = join(dir, String(i), "a", "proj");
          mkdirSync(join(proj, "state"), { recursive: true });
          writeFileSync(join(proj, "stack.yaml"), caseStack(id));
          if (c.withState) writeFileSync(join(proj, "state", "fz.json"), JSON.stringify(priorFor(id)));
          const before = tree(join(dir, String(i)));
          const seen = srv.register(id, c);
          const json = i % 2 === 1;
          const r = await runCli(["plan", "--call-timeout", `${CALL_MS / 1000}s`, ...(json ? ["--json"] : [])], {
            cwd: proj,
            env: { ...NO_PROXY_ENV, CLOUDNATIVE_EMULATOR_HOST: srv.server.hostPort },
            timeoutMs: HANG_MS,
          });
          srv.unregister(id);
          const what =
            `CLI case ${i} (seed ${BASE_SEED + 123}): ${JSON.stringify(c).slice(0, 800)}\n--- exit ` +
            `${r.code} (signal ${r.signal}) after ${r.ms} ms\n--- stdout\n${r.stdout.slice(0, 1500)}\n--- ` +
            `stderr\n${r.stderr.slice(0, 1500)}`;
          f.cases++;
          f.slowestMs = Math.max(f.slowestMs, r.ms);
          if (r.code === 0) f.exit0++;
          else if (r.code === 1) f.exit1++;
          if (r.signal || r.ms > CLI_BOUND_MS) {
            f.hangs++;
            fail(`${what}: hang`, "");
          } else if (
            (r.code !== 0 && r.code !== 1) ||
            /internal error|this is a bug|\n\s+at .*:\d+:\d+\)?\n/.test(r.stderr)
          ) {
            f.crashes++;
            fail(`${what}: crash`, "");
          }
          if (UNSAFE.test(r.stdout + r.stderr)) {
            f.unsafeText++;
            fail(`${what}: control characters`, "");
          }
          if (json && !isJson(r.stdout)) {
            f.notOneJsonDocument++;
            fail(`${what}: stdout is not one JSON document`, "");
          }
          f.writes += setCalls(seen);
          const stateDir = relative(join(dir, String(i)), join(proj, "state")) + sep;
          const outside = changed(before, tree(join(dir, String(i)))).filter((p) => !p.startsWith(stateDir));
          if (outside.length) {
            f.filesOutsideState++;
            fail(`${what}: files written outside the state directory: ${outside.join(", ")}`, "");
          }
        }
      } finally {
        await remove();
      }
      expect(
        {
          crashes: f.crashes,
          hangs: f.hangs,
          writes: f.writes,
          unsafeText: f.unsafeText,
          notOneJsonDocument: f.notOneJsonDocument,
          filesOutsideState: f.filesOutsideState,
        },
        shown(),
      ).toEqual({
        crashes: 0,
        hangs: 0,
        writes: 0,
        unsafeText: 0,
        notOneJsonDocument: 0,
        filesOutsideState: 0,
      });
    },
    3_600_000,
  );
});

/** Plans case `id`'s stack through openCloud (the real client) against the hostile server. */
async function planAgainst(id: number, c: ResponseCase, dir: string, hostPort: string) {
  const stack = stackOf(caseStack(id), join(dir, `fz-${id}.yaml`));
  const cloud = await openCloud(stack.provider, {
    env: { CLOUDNATIVE_EMULATOR_HOST: hostPort },
    stateDir: dir,
    stackName: stack.name,
    callTimeoutMs: CALL_MS,
  });
  try {
    const r = await plan(stack, c.withState ? priorFor(id) : undefined, cloud.port, planOptions({ parallelism: 4 }));
    return { errored: r.plan.errored, diagnostics: r.diagnostics };
  } finally {
    await cloud.close();
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
