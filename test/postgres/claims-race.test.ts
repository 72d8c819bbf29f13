// Cross-stack claims under concurrency (hostile review): two stacks (or two workspaces of one
// stack) whose plans were both checked against the claims before either applied must not both
// end up managing one grant. Real engine, real PostgreSQL, the emulator over loopback.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { openStack, planStack, type PlanRequest, type StackSession, withStateLock } from "../../src/engine/session.js";
import { applyPlan } from "../../src/engine/session-apply.js";
import { UserError } from "../../src/diagnostics/diagnostic.js";
import type { EmulatorWorld, State } from "../../src/generated/schemas.js";
import { newState, versionOf } from "../../src/state/index.js";
import { postgresStateStore } from "../../src/state/postgres/store.js";
import { PostgresWorkspaces } from "../../src/state/postgres/workspaces.js";
import { useFreshDatabase } from "./helpers.js";

const rp = (id: string) => `projects/my-project/locations/us-central1/restorePlans/${id}`;
const BINDING_T = "cloudnative:backup/v1:RestorePlanIamBinding";
const MEMBER_T = "cloudnative:backup/v1:RestorePlanIamMember";
const VIEWER = "roles/gkebackup.viewer";
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: ["race-1", "race-2", "race-3", "race-4", "race-5", "race-6", "race-7"].map((id) => ({
    name: rp(id),
    policy: { bindings: [] },
  })),
};

const fresh = useFreshDatabase("claims_race");
let emu: RunningEmulator;
let dir: string;
let seedFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "converge-claims-race-"));
  seedFile = join(dir, "seed.json");
  await writeFile(seedFile, JSON.stringify(SEED));
  emu = await startEmulator({ seedFile });
  process.env.DATABASE_URL = fresh.db.url;
});
afterAll(async () => {
  delete process.env.DATABASE_URL;
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

const request: PlanRequest = {
  refresh: true,
  destroy: false,
  targets: [],
  replace: [],
  parallelism: 4,
  callTimeoutMs: 10_000,
};

async function stackFile(name: string, schema: string, resources: string): Promise<string> {
  const file = join(dir, `${name}-${schema}.yaml`);
  await writeFile(
    file,
    `name: ${name}\nprovider:\n  project: my-project\n  location: us-central1\n  endpoint: ${emu.url}` +
      `\nbackend:\n  type: postgres\n  schema: ${schema}\nresources:\n${resources}`,
  );
  return file;
}

const binding = (address: string, plan: string, members: string[]) =>
  `  ${address}:\n    type: ${BINDING_T}\n    properties:\n      name: ${plan}\n      ` +
  `role: ${VIEWER}\n      members: [${members.join(", ")}]\n`;
const member = (address: string, plan: string, m: string) =>
  `  ${address}:\n    type: ${MEMBER_T}\n    properties:\n      name: ` +
  `${plan}\n      role: ${VIEWER}\n      member: ${m}\n`;

/** Plans `session`, then applies it (the plan's claims were checked at plan time). */
async function planned(session: StackSession) {
  const p = await planStack(session, request);
  expect(p.plan.errored).toBeFalsy();
  return p;
}

async function applyBoth(a: StackSession, b: StackSession) {
  const [pa, pb] = [await planned(a), await planned(b)];
  try {
    const under = (s: StackSession, p: typeof pa) =>
      withStateLock(s.store, "apply", undefined, () => applyPlan(s, p, { parallelism: 4 }));
    return await Promise.allSettled([under(a, pa), under(b, pb)]);
  } finally {
    await pa.close();
    await pb.close();
  }
}

const claimsOf = async (schema: string, object: string) =>
  (
    await fresh.db.admin.query(
      `SELECT stack, workspace, address FROM ${schema}.claims WHERE object = $1 ORDER BY stack, workspace`,
      [object],
    )
  ).rows;

function expectOneWinner(results: PromiseSettledResult<unknown>[]): void {
  const won = results.filter((r) => r.status === "fulfilled" && (r.value as { failed: unknown[] }).failed.length === 0);
  const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  expect(won).toHaveLength(1);
  expect(lost).toHaveLength(1);
  expect(lost[0]!.reason).toBeInstanceOf(UserError);
  expect((lost[0]!.reason as UserError).diagnostics.map((d) => d.code)).toContain("state/claim-conflict");
  // "is applying now" (the winner's reservation), or "manages" when the winner was done first.
  expect(String((lost[0]!.reason as Error).message)).toMatch(/is applying now|manages/);
}

describe("claims under concurrency on PostgreSQL", { timeout: 60_000 }, () => {
  it("two stacks applying at once, each claiming the same binding: one wins, the other writes nothing", async () => {
    const a = openStack({
      file: await stackFile("alpha", "race1", binding("viewers", rp("race-1"), ["user:a@example.com"])),
    });
    const b = openStack({
      file: await stackFile("beta", "race1", binding("readers", rp("race-1"), ["user:b@example.com"])),
    });
    const results = await applyBoth(a, b);
    expect(await claimsOf("race1", rp("race-1"))).toHaveLength(1);
    expectOneWinner(results);
  });

  it("two stacks at once, one a binding and the other a member of it: one wins", async () => {
    const a = openStack({
      file: await stackFile("gamma", "race2", binding("viewers", rp("race-2"), ["user:a@example.com"])),
    });
    const b = openStack({ file: await stackFile("delta", "race2", member("one", rp("race-2"), "user:c@example.com")) });
    const results = await applyBoth(a, b);
    expect(await claimsOf("race2", rp("race-2"))).toHaveLength(1);
    expectOneWinner(results);
    // The loser wrote nothing to the cloud: only the winner's grant is there.
    const policy = (await (await fetch(`${emu.url}/v1/${rp("race-2")}:getIamPolicy`)).json()) as {
      bindings?: Array<{ role: string; members: string[] }>;
    };
    const members = (policy.bindings ?? []).flatMap((x) => x.members);
    expect([["user:a@example.com"], ["user:c@example.com"]]).toContainEqual(members);
    // Nothing stays reserved once the applies ended.
    expect((await fresh.db.admin.query("SELECT count(*)::int AS n FROM race2.reservations")).rows[0].n).toBe(0);
  });
});

describe("claims under concurrency on PostgreSQL: workspaces", { timeout: 60_000 }, () => {
  it("two workspaces of one stack applying the same binding at once: one wins", async () => {
    const file = await stackFile("twins", "race5", binding("viewers", rp("race-5"), ["user:a@example.com"]));
    const catalog = new PostgresWorkspaces(postgresStateStore({ stack: "twins", schema: "race5" }), "twins", "race5");
    await catalog.create("staging");
    const results = await applyBoth(
      openStack({ file, workspace: "default" }),
      openStack({ file, workspace: "staging" }),
    );
    expectOneWinner(results);
    expect(await claimsOf("race5", rp("race-5"))).toHaveLength(1);
  });
});

describe("a resource whose values are known only during apply", { timeout: 60_000 }, () => {
  it(
    "claims before its write: when another stack took that grant since the plan, it " +
      "fails and writes nothing; the rest applies and is saved",
    async () => {
      const late = openStack({
        file: await stackFile(
          "late",
          "late1",
          binding("a", rp("race-7"), ["user:late@example.com"]) + binding("b", rp("race-6"), ["user:late@example.com"]),
        ),
      });
      const lp = await planned(late);
      // b as a plan has a resource whose properties depend on values unknown until apply: its
      // claims are not among the plan's (the planner keeps its properties as written, in `config`).
      const b = lp.real.resource_changes.find((c) => c.address === "b")!;
      b.config = { properties: { name: rp("race-6"), role: VIEWER, members: ["user:late@example.com"] } };
      // Meanwhile another stack takes the same member of that binding (the grant b makes: b's write
      // then revokes nothing the plan did not show, and nothing stops it but the claim).
      const owner = openStack({
        file: await stackFile("owner", "late1", member("viewers", rp("race-6"), "user:late@example.com")),
      });
      const op = await planned(owner);
      await withStateLock(owner.store, "apply", undefined, () => applyPlan(owner, op, { parallelism: 4 }));
      await op.close();
      let result;
      try {
        result = await withStateLock(late.store, "apply", undefined, () => applyPlan(late, lp, { parallelism: 4 }));
      } finally {
        await lp.close();
      }
      expect(result.failed.map((f) => f.address)).toEqual(["b"]);
      expect(result.failed[0]!.diagnostic.summary).toContain('which stack "owner" workspace "default" manages');
      const policy = (await (await fetch(`${emu.url}/v1/${rp("race-6")}:getIamPolicy`)).json()) as {
        bindings?: Array<{ members: string[] }>;
      };
      expect((policy.bindings ?? []).flatMap((x) => x.members)).toEqual(["user:late@example.com"]);
      expect((await late.store.read())!.resources.map((r) => r.address)).toEqual(["a"]);
      expect(await claimsOf("late1", rp("race-6"))).toEqual([
        { stack: "owner", workspace: "default", address: "viewers" },
      ]);
    },
  );
});

describe("claims recorded with a project's number (by an older converge)", { timeout: 60_000 }, () => {
  it("are compared as the claims of its ID: a plan by ID that takes the binding fails, naming that stack", async () => {
    const numbered = `projects/123456789012/locations/us-central1/restorePlans/race-6`;
    const legacy = postgresStateStore({ stack: "legacy", schema: "numbers", env: fresh.db.env });
    try {
      const inputs = { name: numbered, role: VIEWER, members: ["user:old@example.com"] };
      await legacy.write(
        {
          ...newState("legacy"),
          resources: [
            {
              address: "viewers",
              type: BINDING_T,
              id: `${numbered} ${VIEWER}`,
              inputs,
              outputs: inputs,
              dependencies: [],
            },
          ],
        },
        undefined,
      );
    } finally {
      await legacy.close();
    }
    const modern = openStack({
      file: await stackFile("modern", "numbers", binding("readers", "race-6", ["user:new@example.com"])),
    });
    const e = await planStack(modern, request).then(
      async (p) => {
        await p.close();
        return undefined;
      },
      (x: unknown) => x,
    );
    expect(e, "the plan must be refused").toBeInstanceOf(UserError);
    expect((e as UserError).diagnostics.map((d) => d.code)).toContain("state/claim-conflict");
    expect((e as Error).message).toContain('stack "legacy"');
  });
});

describe("reservations", () => {
  const claim = {
    address: "viewers",
    claim: { scope: "binding" as const, kind: "restorePlan" as never, object: rp("race-4"), role: VIEWER },
  };

  it("last as long as the session that holds the lock: a crashed apply's reservation blocks nobody", async () => {
    const env = fresh.db.env;
    const a = postgresStateStore({ stack: "crashes", schema: "res1", env });
    const b = postgresStateStore({ stack: "waits", schema: "res1", env });
    try {
      const lock = await a.lock("apply");
      expect(await a.claims.reserve([claim])).toEqual([]);
      expect(await b.claims.conflicts([{ ...claim, address: "readers" }])).toMatchObject([
        { owner: { stack: "crashes", pending: true } },
      ]);
      // `state claims` lists it too, as what that stack is applying now.
      expect(await b.claims.all()).toEqual([
        { stack: "crashes", workspace: "default", address: "viewers", claim: claim.claim, pending: true },
      ]);
      // The holder's session ends (a crash, a network cut): its reservation counts no more.
      const pid = (await fresh.db.admin.query("SELECT backend_pid FROM res1.locks WHERE stack = 'crashes'")).rows[0]
        .backend_pid as number;
      await fresh.db.admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await expect.poll(() => b.claims.conflicts([{ ...claim, address: "readers" }])).toEqual([]);
      expect(await b.claims.all()).toEqual([]);
      expect(await b.claims.reserve([claim]).catch((e: Error) => e.message)).toContain("needs the state lock");
      const block = await b.lock("apply");
      expect(await b.claims.reserve([{ ...claim, address: "readers" }])).toEqual([]);
      await block.release();
      await lock.release();
      // A released lock takes its reservations along; the crashed one's row stays, inert, until its stack reserves
      // again.
      expect((await fresh.db.admin.query("SELECT stack FROM res1.reservations")).rows).toEqual([{ stack: "crashes" }]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("a write that adds a claim another stack holds", () => {
  const withBinding = (s: State, address: string, plan: string, members: string[]): State => {
    const inputs = { name: rp(plan), role: VIEWER, members };
    return {
      ...s,
      resources: [
        ...s.resources,
        { address, type: BINDING_T, id: `${rp(plan)} ${VIEWER}`, inputs, outputs: inputs, dependencies: [] },
      ],
    };
  };

  it(
    "state push --force of an old version that managed a grant now " + "another stack's: refused, nothing written",
    async () => {
      const env = fresh.db.env;
      const a = postgresStateStore({ stack: "old-owner", schema: "push1", env });
      const b = postgresStateStore({ stack: "new-owner", schema: "push1", env });
      try {
        // v1: a manages the binding; v2: a gave it up; then b took it.
        const v1 = await a.write(
          withBinding(newState("old-owner"), "viewers", "race-3", ["user:a@example.com"]),
          undefined,
        );
        const v2 = await a.write({ ...v1, resources: [] }, versionOf(v1));
        await b.write(withBinding(newState("new-owner"), "readers", "race-3", ["user:b@example.com"]), undefined);
        // A forced push of v1 (the restore of README's "Restore from history").
        const push = a.write({ ...v1, lineage: v2.lineage }, versionOf(v2), { operation: "state push --force" });
        await expect(push).rejects.toMatchObject({
          diagnostics: [expect.objectContaining({ code: "state/claim-conflict" })],
        });
        expect((await a.read())!.serial).toBe(v2.serial);
        expect(await claimsOf("push1", rp("race-3"))).toEqual([
          { stack: "new-owner", workspace: "default", address: "readers" },
        ]);
        // What it already held is not compared again: a rename keeps the state writable.
        const mine = await b.read();
        const renamed = await b.write(
          { ...mine!, resources: mine!.resources.map((r) => ({ ...r, address: "renamed" })) },
          versionOf(mine),
        );
        expect(renamed.resources[0]!.address).toBe("renamed");
      } finally {
        await a.close();
        await b.close();
      }
    },
  );
});
