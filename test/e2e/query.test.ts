// `converge query` through the built CLI against the emulator (needs `npm run build`): a project with
// 250 restore plans and 250 endpoints over 3 locations, listed by the emulator 50 to a page, is found
// whole (every page followed, one policy read per object, nothing written); the grants a stack's
// state manages are marked; `--generate` writes a stack whose plan is imports only and whose apply
// writes nothing; bad input is a diagnostic before any call.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { displayAction, planCounts } from "../../src/contracts/actions.js";
import type { EmulatorWorld, Plan } from "../../src/generated/schemas.js";
import { LIST_METHODS, LOCATION_LISTS } from "../../src/gcp/list-methods.js";
import { useFileEmulator } from "../support/emulator.js";
import { expectExit, resetStats, runCli, stats, totalRequests, useTempDir } from "./helpers.js";
import { getCalls, setCalls } from "./apply-helpers.js";
import { ENDPOINT, RESTORE_PLAN } from "./iam-family-helpers.js";

const PROJECT = "big-project";
const LOCATIONS = ["asia-east1", "europe-west1", "us-central1"];
const N = 250;
const id = (i: number) => `obj-${String(i).padStart(3, "0")}`;
const full = (collection: string, i: number) =>
  `projects/${PROJECT}/locations/${LOCATIONS[i % 3]}/${collection}/${id(i)}`;
const owner = (i: number) => `user:owner-${i}@example.com`;

function world(): EmulatorWorld {
  const objects = (collection: string, role: string) =>
    Array.from({ length: N }, (_, i) => ({
      name: full(collection, i),
      policy: { bindings: [{ role, members: [owner(i), "group:ops@example.com"] }] },
    }));
  return {
    projects: { [PROJECT]: {} },
    restorePlans: objects("restorePlans", RESTORE_PLAN.r1),
    endpoints: objects("endpoints", ENDPOINT.r1),
  };
}

const emu = useFileEmulator({ seed: world(), port: 0, host: "127.0.0.1", pageSizes: { defaultSize: 50, maxSize: 50 } });
const tmp = useTempDir("converge-query-");
const cli = (...args: string[]) => runCli(args, { cwd: tmp.dir, emulator: emu, timeoutMs: 300_000 });

interface QueryDoc {
  listed: number;
  managed_by: unknown;
  objects: { kind: string; name: string; grants: { role: string; member: string; managed_by: string[] }[] }[];
  counts: { objects: number; grants: number; managed: number; unmanaged: number };
}

describe("converge query", { timeout: 600_000 }, () => {
  it("finds all 500 objects of 3 locations through pages of 50, one policy read each, nothing written", async () => {
    await resetStats(emu);
    const r = await cli("query", "--project", PROJECT, "--json");
    expectExit(r, 0);
    const doc = JSON.parse(r.stdout) as QueryDoc;
    const names = doc.objects.map((o) => o.name).sort();
    const expected = Array.from({ length: N }, (_, i) => [full("restorePlans", i), full("endpoints", i)]).flat();
    expect(names).toEqual(expected.sort());
    expect(doc.listed).toBe(2 * N);
    expect(doc.managed_by).toBeNull();
    expect(doc.counts).toMatchObject({ objects: 2 * N, grants: 4 * N });
    const s = await stats(emu);
    // 84, 83 and 83 objects per location: two pages of at most 50 each.
    for (const kind of ["restorePlan", "endpoint"] as const) {
      expect(s.requests[LOCATION_LISTS[kind].id], kind).toBe(1);
      expect(s.requests[LIST_METHODS[kind].id], kind).toBe(6);
    }
    expect([getCalls(s), setCalls(s)]).toEqual([2 * N, 0]);
  });

  it("marks the grants the stack's state manages, and --generate adopts the rest as imports only", async () => {
    const stack = {
      name: "team",
      provider: { project: PROJECT, location: "us-central1" },
      resources: {
        owner2: { type: RESTORE_PLAN.memberT, properties: { name: id(2), role: RESTORE_PLAN.r1, member: owner(2) } },
      },
    };
    await writeFile(join(tmp.dir, "stack.yaml"), stringify(stack));
    expectExit(await cli("apply", "--auto-approve"), 0);
    const filters = ["--kind", "restorePlans", "--location", "us-central1", "--name-glob", "obj-0[0-2]*"];
    const statePath = join(tmp.dir, "state", "team.json");
    const before = await readFile(statePath, "utf8");
    const text = await cli("query", "--project", PROJECT, ...filters);
    expectExit(text, 0);
    expect(await readFile(statePath, "utf8")).toBe(before);
    expect(text.stdout).toContain(`\n  restore plan ${full("restorePlans", 2)}\n`);
    expect(text.stdout).toContain(`\n    ${RESTORE_PLAN.r1}  ${owner(2)}  managed by owner2\n`);
    expect(text.stdout).toContain(`\n    ${RESTORE_PLAN.r1}  group:ops@example.com  unmanaged\n`);
    expect(text.stdout).toContain('Managed grants: those of stack "team"');

    await resetStats(emu);
    const gen = await cli("query", "--project", PROJECT, "--as", "member", "--generate", "--out", "adopted.yaml");
    expectExit(gen, 0);
    expect(gen.stderr).toContain('to adopted.yaml (stack "adopted")');
    expect(setCalls(await stats(emu))).toBe(0);
    const written = await readFile(join(tmp.dir, "adopted.yaml"), "utf8");
    expect(written).not.toContain(`import: ${full("restorePlans", 2)} ${RESTORE_PLAN.r1} ${owner(2)}\n`);
    expect(written).toContain(`import: ${full("endpoints", 2)} ${ENDPOINT.r1} ${owner(2)}\n`);

    const plan = await cli("plan", "-f", "adopted.yaml", "--json");
    expectExit(plan, 0);
    const doc = JSON.parse(plan.stdout) as Plan;
    // Every grant but the managed one: 4 per object, less one.
    expect(doc.resource_changes).toHaveLength(4 * N - 1);
    expect(new Set(doc.resource_changes.map(displayAction))).toEqual(new Set(["import"]));
    expect(planCounts(doc)).toEqual({ import: 4 * N - 1, add: 0, change: 0, destroy: 0 });
    await resetStats(emu);
    expectExit(await cli("apply", "-f", "adopted.yaml", "--auto-approve"), 0);
    expect(setCalls(await stats(emu))).toBe(0);
  });

  it("refuses bad input with a diagnostic before any call", async () => {
    await resetStats(emu);
    const none = await cli("query", "-f", "no-stack.yaml");
    expectExit(none, 1);
    expect(none.stderr).toContain("query needs --project");
    const glob = await cli("query", "--project", PROJECT, "--name-glob", "obj-[0");
    expectExit(glob, 1);
    expect(glob.stderr).toContain('--name-glob "obj-[0" is not a valid glob');
    const kind = await cli("query", "--project", PROJECT, "--kind", "federations");
    expectExit(kind, 1);
    expect(kind.stderr).toContain("--kind takes restorePlans or endpoints");
    await writeFile(join(tmp.dir, "taken.yaml"), "# someone's file\n");
    const taken = await cli("query", "--project", PROJECT, "--generate", "--out", "taken.yaml");
    expectExit(taken, 1);
    expect(taken.stderr).toContain("taken.yaml already exists");
    expect(totalRequests(await stats(emu))).toBe(0);
  });
});
