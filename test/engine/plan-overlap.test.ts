// Issue 20, item 2: the reads a plan starts with go out as soon as the state is read and found
// good, before the planner begins (they run while it sets up and evaluates the stack), and the
// guarantees stay: one read per distinct policy, none with --refresh=false, only the state's when
// destroying, none at all when the state is corrupt.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { CloudClient } from "../../src/cloud/client.js";
import { openStack, planStack, type PlanRequest } from "../../src/engine/session.js";
import { BINDING, bindingState, makeState, rpName } from "../fixtures/builders.js";
import { GET_RP, useFileEmulator } from "../support/emulator.js";

/** What runs when the planner is entered, before it does anything. */
const atPlan: { hook?: () => Promise<void> } = {};
vi.mock("../../src/plan/planner.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/plan/planner.js")>();
  return {
    ...real,
    plan: async (...args: Parameters<typeof real.plan>) => {
      await atPlan.hook?.();
      return real.plan(...args);
    },
  };
});

const IDS = ["a", "b", "c"];
const emu = useFileEmulator({
  seed: {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: IDS.map((id) => ({ name: rpName(id), policy: { bindings: [] } })),
  },
});

let dir: string;
let saved: string | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "converge-overlap-"));
  saved = process.env.CLOUDNATIVE_EMULATOR_HOST;
  process.env.CLOUDNATIVE_EMULATOR_HOST = emu.hostPort;
  // Two resources per restore plan, named in full and by short name: three distinct policies.
  const resources = IDS.flatMap((id, i) => [
    `  ${id}1:\n    type: ${BINDING}\n    properties:\n      name: ${rpName(id)}\n      role: ` +
      `roles/gkebackup.viewer\n      members: [user:u${i}@example.com]\n`,
    `  ${id}2:\n    type: ${BINDING}\n    properties:\n      name: ${id}\n      role: ` +
      `roles/gkebackup.admin\n      members: [user:v${i}@example.com]\n`,
  ]);
  await writeFile(
    join(dir, "stack.yaml"),
    `name: overlap\nprovider:\n  project: my-project\n  location: us-central1\nresources:\n${resources.join("")}`,
  );
});
afterAll(async () => {
  if (saved === undefined) delete process.env.CLOUDNATIVE_EMULATOR_HOST;
  else process.env.CLOUDNATIVE_EMULATOR_HOST = saved;
  await rm(dir, { recursive: true, force: true });
});

async function reads(): Promise<number> {
  const s = (await (await fetch(`${emu.url}/__emulator/stats`)).json()) as { requests: Record<string, number> };
  return s.requests[GET_RP] ?? 0;
}

beforeEach(async () => {
  await fetch(`${emu.url}/__emulator/stats/reset`, { method: "POST" });
  atPlan.hook = undefined;
});

const request = (o: Partial<PlanRequest> = {}): PlanRequest => ({
  refresh: true,
  destroy: false,
  targets: [],
  replace: [],
  parallelism: 10,
  callTimeoutMs: 10_000,
  ...o,
});

async function planWith(state: string, o: Partial<PlanRequest> = {}) {
  const session = openStack({ file: join(dir, "stack.yaml"), state: join(dir, state) });
  const planned = await planStack(session, request(o));
  await planned.close();
  return planned;
}

/** Waits until the emulator has answered a read (the planner is held until then). */
async function readSeen(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await reads()) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no read reached the cloud before the planner began");
}

describe("planStack: the first reads overlap the planner's work", () => {
  it("with no state: the stack's policies are read before the planner begins, each once", async () => {
    atPlan.hook = readSeen;
    const planned = await planWith("cold.json");
    expect(planned.plan.resource_changes.map((c) => c.change.action)).toEqual(Array(6).fill("create"));
    expect(await reads()).toBe(3);
  });

  it("with a state: its policies too, each still read once", async () => {
    const state = makeState("overlap", [
      bindingState("a1", { name: rpName("a"), role: "roles/gkebackup.viewer", members: ["user:u0@example.com"] }, "e1"),
    ]);
    await writeFile(join(dir, "warm.json"), JSON.stringify(state));
    atPlan.hook = readSeen;
    const planned = await planWith("warm.json");
    expect(planned.plan.errored).toBe(false);
    expect(await reads()).toBe(3);
  });

  it(
    "the cloud client hears how many reads the plan starts with before the planner " +
      "begins (a large run moves its HTTP to the worker then)",
    async () => {
      const heard = vi.spyOn(CloudClient.prototype, "expectRequests");
      let before: number[] = [];
      atPlan.hook = async () => {
        before = heard.mock.calls.map(([n]) => n);
      };
      try {
        await planWith("heard.json");
      } finally {
        heard.mockRestore();
      }
      expect(before).toEqual([1, 2, 3]);
    },
  );

  it("--refresh=false reads nothing; destroy reads only the state's policies", async () => {
    const state = makeState("overlap", [
      bindingState("a1", { name: rpName("a"), role: "roles/gkebackup.viewer", members: ["user:u0@example.com"] }, "e1"),
    ]);
    await writeFile(join(dir, "destroy.json"), JSON.stringify(state));
    await planWith("destroy.json", { refresh: false });
    expect(await reads()).toBe(0);
    await planWith("destroy.json", { destroy: true });
    expect(await reads()).toBe(1);
  });

  it("a corrupt state: an error, and no read sent", async () => {
    await writeFile(join(dir, "corrupt.json"), "{ not json");
    await expect(planWith("corrupt.json")).rejects.toThrow(/corrupt\.json/);
    expect(await reads()).toBe(0);
  });
});
