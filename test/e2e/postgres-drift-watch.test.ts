// `converge drift --watch` through the built CLI against the emulator, its state on the run's real
// PostgreSQL server (needs `npm run build`). The watch runs with an interval of an hour and is told
// to check now with SIGUSR1 once the test has seen the previous check end: nothing depends on the
// machine's speed. A drift is reported once, not again while it stays, and its coming and going are
// recorded in the history (`state history` shows them).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useFreshDatabase } from "../postgres/helpers.js";
import { expectExit, runCli, setPolicyOutOfBand, startCli, useEmulatorWorkspace } from "./helpers.js";
import { bindingYaml, rp, stackHead } from "./apply-helpers.js";

const ROLE = "roles/gkebackup.viewer";
const MALLORY = "user:mallory@example.com";
const ws = useEmulatorWorkspace(
  {
    projects: { "my-project": { number: "123456789012" } },
    restorePlans: [{ name: rp("watched"), policy: { bindings: [] } }],
  },
  "converge-drift-watch-",
);
const fresh = useFreshDatabase("e2e_drift");

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe("drift --watch on PostgreSQL", { timeout: 180_000 }, () => {
  it("reports a change once, then not again, and records it in the history", async () => {
    const file = join(ws.dir, "watched.yaml");
    const head = stackHead("watched").replace(
      "resources:\n",
      "backend:\n  type: postgres\n  schema: drift\nresources:\n",
    );
    await writeFile(file, head + bindingYaml("viewers", rp("watched"), ROLE, ["user:alice@example.com"]));
    const opts = { cwd: ws.dir, emulator: ws.emu, env: fresh.db.env, timeoutMs: 120_000 };
    expectExit(await runCli(["apply", "--auto-approve", "-f", file], opts), 0);

    const watch = startCli(["drift", "--watch", "--interval", "1h", "-f", file], opts);
    try {
      await watch.waitFor("Check 1 at");
      expect(watch.output()).toContain("0 new, 0 gone, 0 still there");
      await setPolicyOutOfBand(ws.emu, rp("watched"), (p) => ({
        ...p,
        bindings: [{ role: ROLE, members: ["user:alice@example.com", MALLORY] }],
      }));
      watch.child.kill("SIGUSR1");
      await watch.waitFor("Check 2 at");
      expect(watch.output()).toContain(`"${MALLORY}" was given "${ROLE}"`);
      watch.child.kill("SIGUSR1");
      await watch.waitFor("Check 3 at");
      expect(watch.output()).toMatch(/Check 3 at [^:]+:\d\d:\d\d\.\d+Z: 0 new, 0 gone, 1 still there/);
      expect(occurrences(watch.output(), `"${MALLORY}" was given`)).toBe(1);
      await setPolicyOutOfBand(ws.emu, rp("watched"), (p) => ({
        ...p,
        bindings: [{ role: ROLE, members: ["user:alice@example.com"] }],
      }));
      watch.child.kill("SIGUSR1");
      await watch.waitFor("Check 4 at");
      expect(watch.output()).toContain("Drift gone at");
    } finally {
      watch.child.kill("SIGTERM");
    }
    const ended = await watch.doneWithin(60_000);
    expect(ended.code).toBe(130);

    const { rows } = await fresh.db.admin.query(
      "SELECT event, class, object, finding->>'member' AS member FROM drift.drift_events ORDER BY id",
    );
    expect(rows).toEqual([
      { event: "found", class: "added", object: rp("watched"), member: MALLORY },
      { event: "cleared", class: "added", object: rp("watched"), member: MALLORY },
    ]);
    const history = await runCli(["state", "history", "-f", file], opts);
    expectExit(history, 0);
    expect(history.stdout).toContain("drift found");
    expect(history.stdout).toContain(`added: ${MALLORY} ${ROLE} on ${rp("watched")}`);
    expect(history.stdout).toContain("drift gone");
    const json = await runCli(["state", "history", "--json", "-f", file], opts);
    const records = JSON.parse(json.stdout) as { operation: string; drift?: { member: string } }[];
    expect(records.map((r) => r.operation)).toEqual(["apply", "drift found", "drift gone"]);
  });
});
