// Team state on PostgreSQL (issue 17), end to end: the real CLI against the emulator over
// loopback, with `backend: {type: postgres}` and DATABASE_URL pointing at the run's real
// PostgreSQL server (test/postgres/global-setup.ts). apply writes the state to the database (no
// local state file), a second plan has no changes, and of two concurrent applies of the same
// stack one proceeds while the other fails at once naming the holder, or waits with
// --lock-timeout and then applies on the new state.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { freshDatabase, type TestDatabase } from "../postgres/helpers.js";
import {
  clearFaults,
  memberYaml,
  membersOf,
  policyIn,
  rp,
  bindingYaml,
  setFaults,
  stackHead,
} from "./apply-helpers.js";
import { expectExit, runCli, startCli, type StartedCli, useEmulatorWorkspace, world } from "./helpers.js";

const N = 6;
const STACKS = ["alpha", "beta", "gamma", "delta", "omega"];
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: STACKS.flatMap((stack) =>
    Array.from({ length: N }, (_, i) => ({ name: rp(`${stack}-${i}`), policy: { bindings: [] } })),
  ),
  endpoints: [{ name: "projects/my-project/locations/us-central1/endpoints/churn", policy: { bindings: [] } }],
};

function stack(name: string, schema: string, extra = ""): string {
  let s = stackHead(name).replace("resources:\n", `backend:\n  type: postgres\n  schema: ${schema}\nresources:\n`);
  for (let i = 0; i < N; i++)
    s += bindingYaml(`b${i}`, rp(`${name}-${i}`), "roles/gkebackup.viewer", [`user:${name}-${i}@example.com`]);
  return s + extra;
}

const ws = useEmulatorWorkspace(SEED, "converge-postgres-apply-");
let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase("e2e_apply");
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `fn` while an apply of `file` holds the lock, slowed down by emulator latency (it has
 *  printed its plan, so it planned under the lock and is applying). */
async function whileApplying(file: string, fn: (holder: StartedCli) => Promise<void>): Promise<void> {
  await setFaults(ws.emu, { latencyMs: 400 });
  try {
    const holder = startCli(["apply", "--auto-approve", "--parallelism", "1", "-f", file], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: db.env,
      timeoutMs: 90_000,
    });
    await holder.waitFor("Plan:");
    await fn(holder);
  } finally {
    await clearFaults(ws.emu);
  }
}

describe("apply with the state on PostgreSQL", () => {
  it("applies, keeps the state in the database with its history, and a second plan says No changes", async () => {
    const file = join(ws.dir, "alpha.yaml");
    await writeFile(file, stack("alpha", "team_a"));
    const applied = await runCli(["apply", "--auto-approve", "-f", file], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: db.env,
      timeoutMs: 60_000,
    });
    expectExit(applied, 0);
    expect(applied.stdout).toContain(`Apply complete! Resources: ${N} added, 0 changed, 0 destroyed.`);
    expect(existsSync(join(ws.dir, "state", "alpha.json"))).toBe(false);
    expect(applied.stdout + applied.stderr).not.toContain(db.password);

    const { rows } = await db.admin.query(
      "SELECT serial, operation, actor, plan_digest, granted, revoked FROM " +
        "team_a.history WHERE stack = 'alpha' ORDER BY serial",
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.at(-1)).toMatchObject({ operation: "apply", granted: N, revoked: 0 });
    expect(rows.at(-1).plan_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const current = await db.admin.query(
      "SELECT serial FROM team_a.states WHERE stack = 'alpha' AND workspace = 'default'",
    );
    expect(Number(current.rows[0].serial)).toBe(Number(rows.at(-1).serial));

    const plan = await runCli(["plan", "-f", file], { cwd: ws.dir, emulator: ws.emu, env: db.env, timeoutMs: 60_000 });
    expectExit(plan, 0);
    expect(plan.stdout).toContain("No changes.");
    const w = await world(ws.emu);
    expect(membersOf(policyIn(w, rp("alpha-0")), "roles/gkebackup.viewer")).toEqual(["user:alpha-0@example.com"]);
  });

  it("two concurrent applies: one proceeds, the other fails at once naming the holder", async () => {
    const file = join(ws.dir, "beta.yaml");
    await writeFile(file, stack("beta", "team_b"));
    await whileApplying(file, async (first) => {
      const started = Date.now();
      const second = await runCli(["apply", "--auto-approve", "-f", file], {
        cwd: ws.dir,
        emulator: ws.emu,
        env: db.env,
        timeoutMs: 60_000,
      });
      expectExit(second, 1);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(second.stderr).toContain(`state is locked by`);
      expect(second.stderr).toContain(`(apply, pid ${first.child.pid}, since`);
      expect(second.stderr).toContain("Use --lock-timeout to wait for it.");
      expect(second.stderr).not.toContain(db.password);
      const done = await first.done;
      expectExit(done, 0);
      expect(done.stdout).toContain(`Apply complete! Resources: ${N} added`);
    });
  });

  it("with --lock-timeout the second apply waits, then applies on the new state", async () => {
    const file = join(ws.dir, "gamma.yaml");
    await writeFile(file, stack("gamma", "team_b"));
    const file2 = join(ws.dir, "gamma2.yaml");
    const churn = "projects/my-project/locations/us-central1/endpoints/churn";
    await writeFile(
      file2,
      stack("gamma", "team_b", memberYaml("invoker", churn, "roles/aiplatform.user", "user:dana@example.com")),
    );
    await whileApplying(file, async (first) => {
      const second = await runCli(["apply", "--auto-approve", "--lock-timeout", "60s", "-f", file2], {
        cwd: ws.dir,
        emulator: ws.emu,
        env: db.env,
        timeoutMs: 90_000,
      });
      expectExit(await first.done, 0);
      expectExit(second, 0);
      // It planned after the first apply had saved: only the new resource is added.
      expect(second.stdout).toContain("Apply complete! Resources: 1 added, 0 changed, 0 destroyed.");
    });
    const w = await world(ws.emu);
    expect(membersOf(policyIn(w, churn), "roles/aiplatform.user")).toEqual(["user:dana@example.com"]);
  });

  it("SIGKILL of the holder: the next apply proceeds without force-unlock", async () => {
    const file = join(ws.dir, "omega.yaml");
    await writeFile(file, stack("omega", "team_o"));
    await whileApplying(file, async (killed) => {
      killed.child.kill("SIGKILL");
      await killed.done;
    });
    const next = await runCli(["apply", "--auto-approve", "--lock-timeout", "10s", "-f", file], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: db.env,
      timeoutMs: 60_000,
    });
    expectExit(next, 0);
    expect(next.stdout).toContain("Apply complete!");
    const plan = await runCli(["plan", "-f", file], { cwd: ws.dir, emulator: ws.emu, env: db.env, timeoutMs: 60_000 });
    expect(plan.stdout).toContain("No changes.");
  });

  it("--backend local overrides the stack; --state with the postgres backend is refused", async () => {
    const file = join(ws.dir, "delta.yaml");
    await writeFile(file, stack("delta", "team_d"));
    const refused = await runCli(["plan", "-f", file, "--state", join(ws.dir, "delta.json")], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: db.env,
    });
    expectExit(refused, 1);
    expect(refused.stderr).toContain("--state names a local state file");
    const local = await runCli(["apply", "--auto-approve", "--backend", "local", "-f", file], {
      cwd: ws.dir,
      emulator: ws.emu,
      env: { DATABASE_URL: "postgres://nobody:x@127.0.0.1:1/none" },
    });
    expectExit(local, 0);
    expect(existsSync(join(ws.dir, "state", "delta.json"))).toBe(true);
  });
});
