// The data file: loaded instead of the seed, written atomically, durable before acknowledging.
import { readFileSync, statSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { validate } from "../../src/schemas/index.js";
import { ADMIN, api, FED, RP, RP_OPEN, seedWorld, tempDir, VIEWER } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
const running: RunningEmulator[] = [];

async function start(opts: Parameters<typeof startEmulator>[0]): Promise<RunningEmulator> {
  const e = await startEmulator(opts);
  running.push(e);
  return e;
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
  await cleanup();
});

describe("data file", () => {
  it("is written at start (mode 0600, schema-valid, defaults filled in)", async () => {
    const data = join(dir, "world.json");
    await start({ seed: seedWorld(), dataFile: data });
    expect(statSync(data).mode & 0o777).toBe(0o600);
    const world = JSON.parse(readFileSync(data, "utf8"));
    expect(validate("emulator-seed.schema.json", world)).toEqual([]);
    expect(world.restorePlans[1].policy.etag).toMatch(/=$/);
    expect(world.federations[1].uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("a restart on the same data file has the same world (policies, etags, federation fields)", async () => {
    const data = join(dir, "world.json");
    const a = await start({ seed: seedWorld(), dataFile: data });
    const ca = api(a.url);
    const w = await ca.setRestorePlan(RP_OPEN, {
      policy: { bindings: [{ role: "roles/x.y", members: ["user:a@example.com"] }] },
    });
    expect(w.status).toBe(200);
    await ca.admin("POST", "objects", { kind: "endpoint", name: "projects/p/locations/l/endpoints/new" });
    const fedBefore = (await ca.getFederation(FED, VIEWER)).json;
    const rpBefore = (await ca.getRestorePlan(RP, 3, ADMIN)).json;
    const worldBefore = (await ca.admin("GET", "world")).json;
    await a.close();

    // A different seed is ignored: the data file wins.
    const b = await start({ seed: {}, dataFile: data });
    const cb = api(b.url);
    expect((await cb.getRestorePlan(RP_OPEN)).json).toEqual(w.json);
    expect((await cb.getRestorePlan(RP, 3, ADMIN)).json).toEqual(rpBefore);
    expect((await cb.getFederation(FED, VIEWER)).json).toEqual(fedBefore);
    expect((await cb.admin("GET", "world")).json).toEqual(worldBefore);
    expect((await cb.getEndpoint("projects/p/locations/l/endpoints/new")).status).toBe(200);
  });

  it("acknowledges a write only once it is on disk", async () => {
    const data = join(dir, "world.json");
    const e = await start({ seed: seedWorld(), dataFile: data });
    const c = api(e.url);
    const writes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        c.setRestorePlan(RP_OPEN, {
          policy: { bindings: [{ role: "roles/x.y", members: [`user:u${i}@example.com`] }] },
        }),
      ),
    );
    expect(writes.every((w) => w.status === 200)).toBe(true);
    const last = await c.getRestorePlan(RP_OPEN);
    // No close(): the file already holds the last acknowledged write.
    const world = JSON.parse(readFileSync(data, "utf8"));
    const onDisk = world.restorePlans.find((o: { name: string }) => o.name === RP_OPEN).policy;
    expect(onDisk).toEqual(last.json);
    const one = await c.setRestorePlan(RP_OPEN, { policy: { bindings: [] } });
    const again = JSON.parse(readFileSync(data, "utf8"));
    expect(again.restorePlans.find((o: { name: string }) => o.name === RP_OPEN).policy.etag).toBe(one.json.etag);
    // Temp files never linger.
    expect((await readdir(dir)).filter((f) => /\.tmp-/.test(f))).toEqual([]);
  });

  it("reset reloads the seed and persists it", async () => {
    const data = join(dir, "world.json");
    const e = await start({ seed: seedWorld(), dataFile: data });
    const c = api(e.url);
    await c.setRestorePlan(RP_OPEN, { policy: { bindings: [{ role: "roles/x.y", members: ["user:a@example.com"] }] } });
    await c.admin("POST", "reset");
    const world = JSON.parse(readFileSync(data, "utf8"));
    expect(world.restorePlans.find((o: { name: string }) => o.name === RP_OPEN).policy.bindings).toBeUndefined();
  });

  it("refuses a broken data file with a clear message", async () => {
    const data = join(dir, "broken.json");
    await writeFile(data, '{"restorePlans": [');
    await expect(startEmulator({ dataFile: data })).rejects.toThrow(/data file .*broken\.json: not valid JSON/);
    await writeFile(data, JSON.stringify({ restorePlans: [{ nme: "x" }] }));
    await expect(startEmulator({ dataFile: data })).rejects.toThrow(/data file .*broken\.json: restorePlans\[0\]/);
  });

  it("removes temp files left by a killed writer", async () => {
    const data = join(dir, "world.json");
    await writeFile(join(dir, ".world.json.tmp-999999999-0a1b2c"), "{");
    await start({ dataFile: data });
    expect((await readdir(dir)).sort()).toEqual(["world.json"]);
  });
});
